#include "wifi-network.h"

#include "wireless-common.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "ns3/wifi-helper.h"
#include "ns3/wifi-mac-helper.h"
#include "ns3/wifi-net-device.h"
#include "ns3/yans-wifi-helper.h"

#include <algorithm>
#include <sstream>

namespace netloop
{

NS_LOG_COMPONENT_DEFINE("NetloopWifiNetwork");

namespace
{

std::vector<std::string>
Rates(const std::string& prefix, const std::vector<std::string>& values)
{
    std::vector<std::string> out;
    for (const std::string& v : values)
    {
        out.push_back(prefix + v + "Mbps");
    }
    return out;
}

const std::vector<std::string> kOfdm =
    Rates("OfdmRate", {"6", "9", "12", "18", "24", "36", "48", "54"});
const std::vector<std::string> kErpOfdm =
    Rates("ErpOfdmRate", {"6", "9", "12", "18", "24", "36", "48", "54"});
const std::vector<std::string> kDsss = Rates("DsssRate", {"1", "2", "5_5", "11"});
const std::vector<std::string> kHt =
    {"HtMcs0", "HtMcs1", "HtMcs2", "HtMcs3", "HtMcs4", "HtMcs5", "HtMcs6", "HtMcs7"};

std::vector<std::string>
Concat(std::initializer_list<std::vector<std::string>> lists)
{
    std::vector<std::string> out;
    for (const auto& l : lists)
    {
        out.insert(out.end(), l.begin(), l.end());
    }
    return out;
}

struct RateManager
{
    const char* name;
    const char* type;
    bool ht;     //!< works with HT (802.11n) stations
    bool legacy; //!< works with non-HT stations
};

const RateManager kRateManagers[] = {
    {"constant", "ns3::ConstantRateWifiManager", true, true},
    {"ideal", "ns3::IdealWifiManager", true, true},
    {"thompson", "ns3::ThompsonSamplingWifiManager", true, true},
    {"minstrelHt", "ns3::MinstrelHtWifiManager", true, false},
    {"minstrel", "ns3::MinstrelWifiManager", false, true},
    {"arf", "ns3::ArfWifiManager", false, true},
    {"aarf", "ns3::AarfWifiManager", false, true},
};

} // namespace

std::variant<WifiParameters, std::string>
ParseWifiOptions(const WifiOptions& o, const NetworkRequest& request)
{
    WifiParameters p;
    std::vector<std::string> modes;
    p.standardName = o.standard;
    if (o.standard == "80211a")
    {
        p.standard = ns3::WIFI_STANDARD_80211a;
        p.band5GHz = true;
        modes = kOfdm;
        p.phyMode = p.basicMode = "OfdmRate6Mbps";
    }
    else if (o.standard == "80211b")
    {
        p.standard = ns3::WIFI_STANDARD_80211b;
        p.band5GHz = false;
        modes = kDsss;
        p.phyMode = p.basicMode = "DsssRate1Mbps";
    }
    else if (o.standard == "80211g")
    {
        p.standard = ns3::WIFI_STANDARD_80211g;
        p.band5GHz = false;
        modes = Concat({kErpOfdm, kDsss});
        p.phyMode = p.basicMode = "ErpOfdmRate6Mbps";
    }
    else if (o.standard == "80211n")
    {
        p.standard = ns3::WIFI_STANDARD_80211n;
        p.band5GHz = o.band != "2.4GHz";
        modes = p.band5GHz ? Concat({kHt, kOfdm}) : Concat({kHt, kErpOfdm, kDsss});
        p.phyMode = "HtMcs0";
        p.basicMode = p.band5GHz ? "OfdmRate6Mbps" : "ErpOfdmRate6Mbps";
    }
    else
    {
        return "--wifiStandard=" + o.standard +
               " is not a Wi-Fi standard here; use 80211a, 80211b, 80211g or 80211n";
    }
    if (!o.band.empty())
    {
        if (o.band != "2.4GHz" && o.band != "5GHz")
        {
            return "--wifiBand=" + o.band + " is not a band; use 2.4GHz or 5GHz";
        }
        if ((o.band == "5GHz") != p.band5GHz)
        {
            return "--wifiBand=" + o.band + " does not fit --wifiStandard=" + o.standard +
                   " (only 80211n works in both bands)";
        }
    }
    const bool ht = p.standard == ns3::WIFI_STANDARD_80211n;
    const uint32_t defaultWidth = p.standard == ns3::WIFI_STANDARD_80211b ? 22 : 20;
    p.channelWidth = o.channelWidth == 0 ? defaultWidth : o.channelWidth;
    if (p.channelWidth != defaultWidth && !(ht && p.channelWidth == 40))
    {
        return "--channelWidth=" + std::to_string(o.channelWidth) + " MHz is not possible with " +
               o.standard + "; use " + std::to_string(defaultWidth) + (ht ? " or 40" : "");
    }
    const std::string& mode = request.radio.phyMode;
    if (!mode.empty())
    {
        if (std::find(modes.begin(), modes.end(), mode) == modes.end())
        {
            return "--phyMode=" + mode + " is not a mode of " + o.standard +
                   (ht ? (p.band5GHz ? " at 5 GHz" : " at 2.4 GHz") : "") + "; use one of " +
                   JoinNames(modes);
        }
        p.phyMode = mode;
    }
    bool found = false;
    std::string names;
    for (const RateManager& m : kRateManagers)
    {
        if (ht ? m.ht : m.legacy)
        {
            names += (names.empty() ? "" : ", ") + std::string(m.name);
            if (o.rateManager == m.name)
            {
                found = true;
                p.rateManager = m.name;
                p.rateManagerType = m.type;
            }
        }
    }
    if (!found)
    {
        return "--rateManager=" + o.rateManager + " is not available with " + o.standard +
               "; use one of " + names;
    }
    auto common = ParseWirelessRequest(request);
    if (auto* error = std::get_if<std::string>(&common))
    {
        return *error;
    }
    p.radio = std::get<WirelessRequest>(common).radio;
    p.background = std::get<WirelessRequest>(common).background;
    return p;
}

BuiltNetwork
BuildWifiNetwork(const WifiParameters& p,
                 uint32_t nodeCount,
                 const std::vector<ns3::Vector>& positions,
                 int64_t stream)
{
    NS_LOG_FUNCTION(nodeCount << stream);
    WirelessNodes nodes = CreateWirelessNodes(nodeCount, p.background.nodes, positions);

    PropagationChain chain(p.radio);
    ns3::YansWifiPhyHelper phy;
    phy.SetChannel(CreateYansChannel(chain));
    phy.Set("TxPowerStart", ns3::DoubleValue(p.radio.txPowerDbm));
    phy.Set("TxPowerEnd", ns3::DoubleValue(p.radio.txPowerDbm));
    phy.Set("TxPowerLevels", ns3::UintegerValue(1));
    if (p.standard == ns3::WIFI_STANDARD_80211n)
    {
        phy.Set("ChannelSettings",
                ns3::StringValue("{0, " + std::to_string(p.channelWidth) + ", " +
                                 (p.band5GHz ? "BAND_5GHZ" : "BAND_2_4GHZ") + ", 0}"));
    }

    ns3::WifiHelper wifi;
    wifi.SetStandard(p.standard);
    if (p.rateManager == "constant")
    {
        wifi.SetRemoteStationManager(p.rateManagerType,
                                     "DataMode",
                                     ns3::StringValue(p.phyMode),
                                     "ControlMode",
                                     ns3::StringValue(p.basicMode));
    }
    else
    {
        wifi.SetRemoteStationManager(p.rateManagerType);
    }
    ns3::WifiMacHelper mac;
    mac.SetType("ns3::AdhocWifiMac");
    ns3::NetDeviceContainer devices = wifi.Install(phy, mac, nodes.all);

    auto first = ns3::DynamicCast<ns3::WifiNetDevice>(devices.Get(0));
    const double frequencyHz = first->GetPhy()->GetFrequency() * 1e6;
    chain.SetFrequency(frequencyHz);

    stream += wifi.AssignStreams(devices, stream);
    stream += chain.AssignStreams(stream);
    ns3::Ipv4InterfaceContainer interfaces;
    BuiltNetwork built =
        FinishWirelessNetwork(nodes, devices, p.radio, p.background, &stream, &interfaces);

    std::ostringstream d;
    d << "wifi " << p.standardName << " ad hoc, " << nodeCount << " node"
      << (nodeCount == 1 ? "" : "s") << ", " << frequencyHz / 1e6 << " MHz/" << p.channelWidth
      << " MHz: " << p.rateManager;
    if (p.rateManager == "constant")
    {
        d << " " << p.phyMode;
    }
    d << ", " << p.radio.txPowerDbm << " dBm, " << chain.Describe() << ", "
      << (p.radio.staticArp ? "static" : "dynamic") << " ARP; " << Describe(p.background);
    built.description = d.str();
    return built;
}

std::string
WifiNetworkBuilder::GetName() const
{
    return "wifi";
}

std::string
WifiNetworkBuilder::GetDoc() const
{
    return "IEEE 802.11 ad hoc, one hop; control nodes are 0..nodes.";
}

void
WifiNetworkBuilder::DeclareArguments(ArgumentTable& table)
{
    table
        .Add("wifiStandard",
             "standard",
             "80211a (5 GHz), 80211b, 80211g (2.4 GHz) or 80211n (HT; band from --wifiBand)",
             m_options.standard)
        .Choices({{"802.11a", "80211a"},
                  {"802.11b", "80211b"},
                  {"802.11g", "80211g"},
                  {"802.11n", "80211n"}});
    table
        .Add("wifiBand",
             "band",
             "80211n only: 2.4GHz or 5GHz (a is 5 GHz, b and g are 2.4 GHz)",
             m_options.band)
        .Choices({{"2.4GHz", "2.4GHz"}, {"5GHz", "5GHz"}})
        .Unset("5GHz for 80211n");
    table
        .Add("rateManager",
             "rate_manager",
             "rate control: constant (--phyMode), ideal, thompson, minstrelHt (80211n), "
             "minstrel, arf, aarf (not 80211n)",
             m_options.rateManager)
        .Choices({{"constant", "constant"},
                  {"ideal", "ideal"},
                  {"thompson", "thompson"},
                  {"minstrel_ht", "minstrelHt"},
                  {"minstrel", "minstrel"},
                  {"arf", "arf"},
                  {"aarf", "aarf"}});
    table
        .Add("channelWidth",
             "channel_width",
             "channel width: 20; 22 for 80211b; 80211n also 40",
             m_options.channelWidth)
        .Unit("MHz")
        .Allowed({20, 22, 40})
        .Unset("the standard's (20; 22 for 80211b)");
}

} // namespace netloop
