#include "wave-network.h"

#include "wireless-common.h"
#include "wireless-drops.h"

#include "ns3/abort.h"
#include "ns3/channel-scheduler.h"
#include "ns3/double.h"
#include "ns3/frame-exchange-manager.h"
#include "ns3/log.h"
#include "ns3/node-list.h"
#include "ns3/ocb-wifi-mac.h"
#include "ns3/qos-txop.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "ns3/wave-bsm-helper.h"
#include "ns3/wave-helper.h"
#include "ns3/wave-mac-helper.h"
#include "ns3/wave-net-device.h"
#include "ns3/wifi-80211p-helper.h"
#include "ns3/wifi-net-device.h"
#include "ns3/wifi-remote-station-manager.h"
#include "ns3/yans-wifi-helper.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

namespace netloop
{

NS_LOG_COMPONENT_DEFINE("NetloopWaveNetwork");

namespace
{

/// Centre frequency of SCH1 (channel 172), where the WAVE device carries IP.
constexpr double kSch1FrequencyHz = 5860e6;
/// GPS time-sync accuracy of BSM senders, ns (ns-3's vanet-routing-compare uses 40).
constexpr double kBsmGpsAccuracyNs = 40;
/// How long BSMs are generated; far beyond any run.
const ns3::Time kBsmTotalTime = ns3::Seconds(100000);

/**
 * WaveHelper::AssignStreams of ns-3.37 dereferences the plain DCF of every
 * MAC, which QoS (EDCA) MACs do not have: a crash with QosWaveMacHelper. The
 * same streams, assigned per PHY, per MAC's rate manager and per access
 * category, as WifiHelper::AssignStreams does for one MAC.
 */
int64_t
AssignWaveStreams(const ns3::NetDeviceContainer& devices, int64_t stream)
{
    const int64_t first = stream;
    for (uint32_t i = 0; i < devices.GetN(); ++i)
    {
        auto device = ns3::DynamicCast<ns3::WaveNetDevice>(devices.Get(i));
        for (const auto& phy : device->GetPhys())
        {
            stream += phy->AssignStreams(stream);
        }
        for (const auto& [number, mac] : device->GetMacs())
        {
            stream += mac->GetWifiRemoteStationManager()->AssignStreams(stream);
            if (mac->GetQosSupported())
            {
                for (ns3::AcIndex ac : {ns3::AC_VO, ns3::AC_VI, ns3::AC_BE, ns3::AC_BK})
                {
                    stream += mac->GetQosTxop(ac)->AssignStreams(stream);
                }
            }
            else
            {
                stream += mac->GetTxop()->AssignStreams(stream);
            }
        }
    }
    return stream - first;
}

/// What must outlive the simulation when BSMs are installed.
struct BsmState
{
    ns3::Ipv4InterfaceContainer interfaces; //!< BsmApplication keeps a pointer to it
    ns3::WaveBsmHelper helper;              //!< owns the statistics the apps update
    double range = 50.0;                    //!< m
};

} // namespace

std::variant<WaveParameters, std::string>
ParseWaveOptions(const WaveOptions& o, const NetworkRequest& request)
{
    WaveParameters p;
    if (o.mac == "ocb")
    {
        p.mac = WaveMac::Ocb;
    }
    else if (o.mac == "wave")
    {
        p.mac = WaveMac::Wave;
    }
    else
    {
        return "--waveMac=" + o.mac + " is not a WAVE MAC; use ocb or wave";
    }
    if (o.channelAccess == "continuous")
    {
        p.alternating = false;
    }
    else if (o.channelAccess == "alternating")
    {
        if (p.mac != WaveMac::Wave)
        {
            return std::string("--waveChannelAccess=alternating needs --waveMac=wave (an OCB MAC "
                               "stays on one channel)");
        }
        p.alternating = true;
    }
    else
    {
        return "--waveChannelAccess=" + o.channelAccess +
               " is not a channel access; use continuous or alternating";
    }
    if (!request.radio.phyMode.empty())
    {
        const auto& modes = Wave80211pModes();
        if (std::find(modes.begin(), modes.end(), request.radio.phyMode) == modes.end())
        {
            return "--phyMode=" + request.radio.phyMode + " is not an 802.11p mode; use one of " +
                   JoinNames(modes);
        }
        p.phyMode = request.radio.phyMode;
    }
    auto common = ParseWirelessRequest(request);
    if (auto* error = std::get_if<std::string>(&common))
    {
        return *error;
    }
    p.radio = std::get<WirelessRequest>(common).radio;
    p.background = std::get<WirelessRequest>(common).background;

    const uint32_t waveNodes =
        request.nodeCount + p.background.nodes + (p.background.nodes > 0 ? 1 : 0);
    if (o.bsmNodes == "all")
    {
        p.bsmAll = true;
        for (uint32_t i = 0; i < waveNodes; ++i)
        {
            p.bsmNodes.push_back(i);
        }
    }
    else if (!o.bsmNodes.empty() && o.bsmNodes != "none")
    {
        std::stringstream list(o.bsmNodes);
        std::string item;
        while (std::getline(list, item, ','))
        {
            const bool digits = !item.empty() && item.size() <= 9 &&
                                item.find_first_not_of("0123456789") == std::string::npos;
            if (!digits)
            {
                return "--bsmNodes=" + o.bsmNodes + ": \"" + item +
                       "\" is not a node index; write all or e.g. 0,1,2";
            }
            const uint32_t index = std::stoul(item);
            if (index >= waveNodes)
            {
                return "--bsmNodes=" + o.bsmNodes + ": node " + item + " does not exist; the " +
                       "WAVE nodes are 0.." + std::to_string(waveNodes - 1) +
                       " (control nodes, then background nodes and their sink)";
            }
            if (std::find(p.bsmNodes.begin(), p.bsmNodes.end(), index) == p.bsmNodes.end())
            {
                p.bsmNodes.push_back(index);
            }
        }
    }
    if (!(std::isfinite(o.bsmRate) && o.bsmRate > 0.0 && o.bsmRate <= 1000.0))
    {
        std::ostringstream os;
        os << "--bsmRate=" << o.bsmRate << " must be a rate in (0, 1000] BSMs per second";
        return os.str();
    }
    p.bsmRate = o.bsmRate;
    // bsmSize in 1..65507: a declared limit (DeclareArguments).
    p.bsmSize = o.bsmSize;
    if (!(std::isfinite(o.bsmRange) && o.bsmRange > 0.0))
    {
        std::ostringstream os;
        os << "--bsmRange=" << o.bsmRange << " must be a distance > 0 m";
        return os.str();
    }
    p.bsmRange = o.bsmRange;
    std::string error;
    if (!wire::ParseDuration(o.bsmTxMaxDelay, &p.bsmTxMaxDelayNs, &error))
    {
        return "--bsmTxMaxDelay=" + o.bsmTxMaxDelay + ": " + error;
    }
    if (double(p.bsmTxMaxDelayNs) >= 1e9 / p.bsmRate)
    {
        return "--bsmTxMaxDelay=" + o.bsmTxMaxDelay +
               " must be shorter than the BSM interval 1 / --bsmRate";
    }
    return p;
}

BuiltNetwork
BuildWaveNetwork(const WaveParameters& p,
                 uint32_t nodeCount,
                 const std::vector<ns3::Vector>& positions,
                 int64_t stream)
{
    NS_LOG_FUNCTION(nodeCount << stream);
    WirelessNodes nodes = CreateWirelessNodes(nodeCount, p.background.nodes, positions);
    PropagationChain chain(p.radio);
    ns3::Ptr<ns3::YansWifiChannel> channel = CreateYansChannel(chain);
    ns3::NetDeviceContainer devices;
    double frequencyHz = kSch1FrequencyHz;

    if (p.mac == WaveMac::Ocb)
    {
        ns3::YansWifiPhyHelper phy;
        phy.SetChannel(channel);
        phy.Set("TxPowerStart", ns3::DoubleValue(p.radio.txPowerDbm));
        phy.Set("TxPowerEnd", ns3::DoubleValue(p.radio.txPowerDbm));
        phy.Set("TxPowerLevels", ns3::UintegerValue(1));
        ns3::Wifi80211pHelper wifi = ns3::Wifi80211pHelper::Default();
        wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                     "DataMode",
                                     ns3::StringValue(p.phyMode),
                                     "ControlMode",
                                     ns3::StringValue(p.phyMode),
                                     "NonUnicastMode",
                                     ns3::StringValue(p.phyMode));
        ns3::NqosWaveMacHelper mac = ns3::NqosWaveMacHelper::Default();
        devices = wifi.Install(phy, mac, nodes.all);
        frequencyHz =
            ns3::DynamicCast<ns3::WifiNetDevice>(devices.Get(0))->GetPhy()->GetFrequency() * 1e6;
        stream += wifi.AssignStreams(devices, stream);
    }
    else
    {
        ns3::YansWavePhyHelper phy = ns3::YansWavePhyHelper::Default();
        phy.SetChannel(channel);
        phy.Set("TxPowerStart", ns3::DoubleValue(p.radio.txPowerDbm));
        phy.Set("TxPowerEnd", ns3::DoubleValue(p.radio.txPowerDbm));
        phy.Set("TxPowerLevels", ns3::UintegerValue(1));
        ns3::QosWaveMacHelper mac = ns3::QosWaveMacHelper::Default();
        ns3::WaveHelper wave = ns3::WaveHelper::Default();
        wave.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                     "DataMode",
                                     ns3::StringValue(p.phyMode),
                                     "ControlMode",
                                     ns3::StringValue(p.phyMode),
                                     "NonUnicastMode",
                                     ns3::StringValue(p.phyMode));
        devices = wave.Install(phy, mac, nodes.all);
        const uint32_t access = p.alternating ? EXTENDED_ALTERNATING : EXTENDED_CONTINUOUS;
        for (uint32_t i = 0; i < devices.GetN(); ++i)
        {
            auto device = ns3::DynamicCast<ns3::WaveNetDevice>(devices.Get(i));
            // ns-3.37: WaveHelper sets the device address after the MACs built their frame
            // exchange managers, which keep the old one and never acknowledge unicast.
            for (const auto& [number, ocb] : device->GetMacs())
            {
                ocb->GetFrameExchangeManager()->SetAddress(ocb->GetAddress());
            }
            // Adaptable: the rate manager picks --phyMode with the PHY's own channel width.
            device->RegisterTxProfile(ns3::TxProfile(SCH1, true, 0));
            ns3::Simulator::ScheduleWithContext(
                device->GetNode()->GetId(),
                ns3::Seconds(0),
                [device, access]() { device->StartSch(ns3::SchInfo(SCH1, true, access)); });
        }
        stream += AssignWaveStreams(devices, stream);
    }
    for (uint32_t i = 0; i < devices.GetN(); ++i)
    {
        InstallOcbDropRelays(devices.Get(i));
    }
    chain.SetFrequency(frequencyHz);
    stream += chain.AssignStreams(stream);

    auto bsm = std::make_shared<BsmState>();
    BuiltNetwork built =
        FinishWirelessNetwork(nodes, devices, p.radio, p.background, &stream, &bsm->interfaces);

    if (!p.bsmNodes.empty())
    {
        // BsmApplication indexes its interface container by ns-3 node id.
        for (uint32_t i = 0; i < nodes.all.GetN(); ++i)
        {
            NS_ABORT_MSG_UNLESS(nodes.all.Get(i)->GetId() == i,
                                "BSM traffic needs the WAVE nodes to be the first nodes of the "
                                "simulation (node "
                                    << i << " has id " << nodes.all.Get(i)->GetId() << ")");
        }
        std::vector<int>& sending = ns3::WaveBsmHelper::GetNodesMoving();
        sending.assign(ns3::NodeList::GetNNodes(), 0);
        for (uint32_t index : p.bsmNodes)
        {
            sending[index] = 1;
        }
        bsm->range = p.bsmRange;
        bsm->helper.Install(bsm->interfaces,
                            kBsmTotalTime,
                            p.bsmSize,
                            ns3::NanoSeconds(int64_t(std::llround(1e9 / p.bsmRate))),
                            kBsmGpsAccuracyNs,
                            std::vector<double>{p.bsmRange},
                            p.alternating ? 1 : 0,
                            ns3::NanoSeconds(p.bsmTxMaxDelayNs));
        stream += bsm->helper.AssignStreams(nodes.all, stream);
        built.onFinish = [bsm]() {
            ns3::Ptr<ns3::WaveBsmStats> stats = bsm->helper.GetWaveBsmStats();
            std::clog << "netloop-server: BSM: " << stats->GetTxPktCount() << " sent, "
                      << stats->GetRxPktCount() << " received; PDR within " << bsm->range
                      << " m: " << stats->GetBsmPdr(1) << std::endl;
        };
    }
    built.keepAlive = bsm;

    std::ostringstream d;
    d << "wave 802.11p " << (p.mac == WaveMac::Ocb ? "OCB" : "WaveNetDevice") << ", " << nodeCount
      << " node" << (nodeCount == 1 ? "" : "s");
    if (p.mac == WaveMac::Wave)
    {
        d << ", SCH1 " << (p.alternating ? "alternating" : "continuous") << " access";
    }
    d << ": " << p.phyMode << ", " << p.radio.txPowerDbm << " dBm, " << chain.Describe() << ", "
      << (p.radio.staticArp ? "static" : "dynamic") << " ARP; " << Describe(p.background);
    if (!p.bsmNodes.empty())
    {
        d << "; BSM on " << (p.bsmAll ? std::string("all") : std::to_string(p.bsmNodes.size()))
          << " nodes, " << p.bsmRate << " Hz, " << p.bsmSize << " bytes";
    }
    built.description = d.str();
    return built;
}

std::string
WaveNetworkBuilder::GetName() const
{
    return "wave";
}

std::string
WaveNetworkBuilder::GetDoc() const
{
    return "Vehicular networking (IEEE 802.11p), OCB or with IEEE 1609.4 channel access; "
           "control nodes are 0..nodes.";
}

void
WaveNetworkBuilder::DeclareArguments(ArgumentTable& table)
{
    table
        .Add("waveMac",
             "mac",
             "ocb (802.11p helper, OCB MAC on one channel) or wave (WAVE helper, 1609.4 channel "
             "access, IP on SCH1)",
             m_options.mac)
        .Choices({{"ocb", "ocb"}, {"wave", "wave"}});
    table
        .Add("waveChannelAccess",
             "channel_access",
             "with --waveMac=wave: continuous (SCH1 all the time) or alternating (50 ms CCH / "
             "50 ms SCH intervals with 4 ms guards)",
             m_options.channelAccess)
        .Choices({{"continuous", "continuous"}, {"alternating", "alternating"}});
    table
        .Add("bsmNodes",
             "bsm.nodes",
             "nodes that broadcast BSMs (ns-3 WaveBsmHelper): none, all, or indices such as "
             "0,1,2 (control nodes, then background nodes and their sink). BSMs start at 1 s",
             m_options.bsmNodes)
        .Type(ArgumentType::NodeList)
        .TableDefault("all");
    table.Add("bsmRate", "bsm.rate", "BSMs per second per node", m_options.bsmRate)
        .Unit("1/s")
        .Min(0)
        .Max(1000);
    table.Add("bsmSize", "bsm.size", "BSM size (UDP payload)", m_options.bsmSize)
        .Unit("bytes")
        .Min(1)
        .Max(65507);
    table
        .Add("bsmRange",
             "bsm.range",
             "range for ns-3's BSM delivery statistics (logged at the end)",
             m_options.bsmRange)
        .Unit("m");
    table
        .Add("bsmTxMaxDelay",
             "bsm.max_jitter",
             "BSMs are sent a uniform random delay in [0, this] after each interval start, a "
             "time with unit",
             m_options.bsmTxMaxDelay)
        .Type(ArgumentType::Duration);
}

} // namespace netloop
