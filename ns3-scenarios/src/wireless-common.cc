#include "wireless-common.h"

#include "wireless-drops.h"

#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-generator.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/log.h"
#include "ns3/neighbor-cache-helper.h"

namespace netloop
{

NS_LOG_COMPONENT_DEFINE("NetloopWireless");

WirelessNodes
CreateWirelessNodes(uint32_t control,
                    uint32_t background,
                    const std::vector<ns3::Vector>& positions)
{
    WirelessNodes nodes;
    nodes.control.Create(control);
    nodes.background.Create(background);
    nodes.all.Add(nodes.control);
    nodes.all.Add(nodes.background);
    nodes.positions = positions;
    if (background > 0)
    {
        nodes.sink = ns3::CreateObject<ns3::Node>();
        nodes.all.Add(nodes.sink);
        nodes.positions.push_back(Centroid(positions, control));
    }
    InstallConstantVelocity(nodes.all, nodes.positions);
    return nodes;
}

BuiltNetwork
FinishWirelessNetwork(const WirelessNodes& nodes,
                      const ns3::NetDeviceContainer& devices,
                      const RadioParameters& radio,
                      const BackgroundParameters& background,
                      int64_t* stream,
                      ns3::Ipv4InterfaceContainer* interfaces)
{
    // This builder owns 10.0.0.0/8 in its simulation: start it afresh (tests build again).
    ns3::Ipv4AddressGenerator::Reset();
    ns3::InternetStackHelper stack;
    stack.Install(nodes.all);
    ns3::Ipv4AddressHelper addresses("10.1.0.0", "255.255.0.0");
    *interfaces = addresses.Assign(devices);
    if (radio.staticArp)
    {
        // Every node can reach every other one in one hop (one subnet, one channel).
        ns3::NeighborCacheHelper().PopulateNeighborCache(devices);
    }
    if (nodes.sink)
    {
        *stream += InstallBackgroundTraffic(background,
                                            nodes.background,
                                            nodes.sink,
                                            interfaces->GetAddress(nodes.all.GetN() - 1),
                                            *stream);
    }
    *stream += stack.AssignStreams(nodes.all, *stream);

    BuiltNetwork built;
    built.nodes = nodes.control;
    built.addressOf = FirstInterfaceAddresses(nodes.control);
    const ns3::NodeContainer all = nodes.all;
    const ns3::NetDeviceContainer hooked = devices;
    built.hookDrops = [all, hooked](DropSink* sink, DropTraceConnections& connections, bool obs) {
        uint32_t count = 0;
        for (uint32_t i = 0; i < all.GetN(); ++i)
        {
            count += HookWifiDrops(hooked.Get(i), i, sink, connections, obs);
            count += HookArpDrops(all.Get(i), i, sink, connections);
        }
        return count;
    };
    return built;
}

std::variant<WirelessRequest, std::string>
ParseWirelessRequest(const NetworkRequest& request)
{
    WirelessRequest p;
    auto radio = ParseRadioOptions(request.radio,
                                   Propagation::LogDistance,
                                   {Propagation::Friis,
                                    Propagation::LogDistance,
                                    Propagation::TwoRayGround,
                                    Propagation::Nakagami,
                                    Propagation::Range});
    if (auto* error = std::get_if<std::string>(&radio))
    {
        return *error;
    }
    p.radio = std::get<RadioParameters>(radio);
    auto background = ParseBackgroundOptions(request.background);
    if (auto* error = std::get_if<std::string>(&background))
    {
        return *error;
    }
    p.background = std::get<BackgroundParameters>(background);
    if (request.nodeCount < 1)
    {
        return std::string("--nodes must be at least 1");
    }
    if (uint64_t(request.nodeCount) + p.background.nodes + 1 > 65000)
    {
        return std::string("--nodes plus --bgNodes is too large for one /16 subnet");
    }
    return p;
}

const std::vector<std::string>&
Wave80211pModes()
{
    static const std::vector<std::string> modes = {"OfdmRate3MbpsBW10MHz",
                                                   "OfdmRate4_5MbpsBW10MHz",
                                                   "OfdmRate6MbpsBW10MHz",
                                                   "OfdmRate9MbpsBW10MHz",
                                                   "OfdmRate12MbpsBW10MHz",
                                                   "OfdmRate18MbpsBW10MHz",
                                                   "OfdmRate24MbpsBW10MHz",
                                                   "OfdmRate27MbpsBW10MHz"};
    return modes;
}

std::string
JoinNames(const std::vector<std::string>& names)
{
    std::string out;
    for (const std::string& n : names)
    {
        out += (out.empty() ? "" : ", ") + n;
    }
    return out;
}

} // namespace netloop
