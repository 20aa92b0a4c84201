#include "p2p-network.h"

#include "wire.h"

#include "ns3/double.h"
#include "ns3/error-model.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-generator.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/log.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/pointer.h"
#include "ns3/queue-size.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace netloop
{

NS_LOG_COMPONENT_DEFINE("NetloopP2pNetwork");

using ns3::Ptr;

std::variant<P2pParameters, std::string>
ParseP2pOptions(const P2pOptions& options, uint32_t nodeCount)
{
    P2pParameters p;
    if (options.topology == "chain")
    {
        p.topology = P2pTopology::Chain;
    }
    else if (options.topology == "star")
    {
        p.topology = P2pTopology::Star;
    }
    else
    {
        return "--topology=" + options.topology + " is not a topology; use chain or star";
    }
    if (nodeCount < 2)
    {
        return "--nodes=" + std::to_string(nodeCount) +
               ": a point-to-point network needs at least 2 nodes";
    }
    // Through the attribute system: DataRate's string constructor aborts on bad input.
    ns3::DataRateValue rate;
    if (!rate.DeserializeFromString(options.dataRate, ns3::MakeDataRateChecker()) ||
        rate.Get().GetBitRate() == 0)
    {
        return "--dataRate=" + options.dataRate +
               " is not a positive data rate; write e.g. 10Mbps, 8000000bps, 1Gbps";
    }
    p.dataRate = rate.Get();
    p.dataRateText = options.dataRate;
    std::string error;
    if (!wire::ParseDuration(options.delay, &p.delayNs, &error))
    {
        return "--delay=" + options.delay + ": " + error;
    }
    if (p.delayNs > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    {
        return "--delay=" + options.delay + " is longer than ns-3 can represent";
    }
    // queueSize >= 1 and lossRate in [0, 1]: declared limits (DeclareArguments), checked
    // before this by NetworkBuilder::Check.
    p.queueSize = options.queueSize;
    p.lossRate = options.lossRate;
    return p;
}

BuiltNetwork
BuildP2pNetwork(const P2pParameters& parameters, uint32_t nodeCount, int64_t stream)
{
    NS_LOG_FUNCTION(nodeCount << stream);
    // This builder owns the simulation's 10.0.0.0/8 address space: start it afresh, so
    // that a process may build, destroy and build again (the tests do).
    ns3::Ipv4AddressGenerator::Reset();

    ns3::NodeContainer nodes;
    nodes.Create(nodeCount);

    ns3::PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", ns3::DataRateValue(parameters.dataRate));
    p2p.SetChannelAttribute("Delay", ns3::TimeValue(ns3::NanoSeconds(parameters.delayNs)));
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 ns3::QueueSizeValue(ns3::QueueSize(ns3::PACKETS, parameters.queueSize)));
    // The device queue is the only queue: without flow control, traffic control
    // hands every packet to the device and installs no queue disc.
    p2p.DisableFlowControl();

    ns3::InternetStackHelper stack;
    stack.Install(nodes);

    ns3::Ipv4AddressHelper addresses;
    addresses.SetBase("10.0.0.0", "255.255.255.252");
    ns3::NetDeviceContainer allDevices;
    for (uint32_t i = 1; i < nodeCount; ++i)
    {
        const uint32_t a = parameters.topology == P2pTopology::Chain ? i - 1 : 0;
        ns3::NetDeviceContainer link = p2p.Install(nodes.Get(a), nodes.Get(i));
        addresses.Assign(link);
        addresses.NewNetwork();
        allDevices.Add(link);
    }
    // No queue disc to remove: Assign() installs the default root queue disc only on
    // devices with flow control (a NetDeviceQueueInterface), and we disabled it.

    if (parameters.lossRate > 0.0)
    {
        for (uint32_t d = 0; d < allDevices.GetN(); ++d)
        {
            Ptr<ns3::RateErrorModel> em = ns3::CreateObject<ns3::RateErrorModel>();
            em->SetUnit(ns3::RateErrorModel::ERROR_UNIT_PACKET);
            em->SetRate(parameters.lossRate);
            stream += em->AssignStreams(stream);
            allDevices.Get(d)->SetAttribute("ReceiveErrorModel", ns3::PointerValue(em));
        }
    }
    stream += stack.AssignStreams(nodes, stream);

    ns3::Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    std::ostringstream description;
    description << "p2p " << (parameters.topology == P2pTopology::Chain ? "chain" : "star")
                << " of " << nodeCount << " nodes: " << parameters.dataRateText << ", delay "
                << wire::FormatTime(parameters.delayNs) << ", device queue " << parameters.queueSize
                << " packets, loss rate " << parameters.lossRate;
    BuiltNetwork built;
    built.nodes = nodes;
    built.addressOf = FirstInterfaceAddresses(nodes);
    built.description = description.str();
    return built;
}

std::string
P2pNetworkBuilder::GetName() const
{
    return "p2p";
}

std::string
P2pNetworkBuilder::GetDoc() const
{
    return "Point-to-point links between the nodes, in a chain or a star.";
}

bool
P2pNetworkBuilder::UsesPositions() const
{
    return false;
}

NodeCountRule
P2pNetworkBuilder::GetNodeCountRule() const
{
    NodeCountRule rule;
    rule.min = 2;
    rule.doc = "Node count; nodes are 0..nodes-1.";
    return rule;
}

void
P2pNetworkBuilder::DeclareArguments(ArgumentTable& table)
{
    table
        .Add("topology",
             "topology",
             "how the nodes are linked: chain (0-1-...-N-1) or star (node 0 is the hub)",
             m_options.topology)
        .Choices({{"chain", "chain"}, {"star", "star"}});
    table
        .Add("dataRate",
             "data_rate",
             "link data rate, as an ns-3 DataRate (e.g. 10Mbps, 8000000bps)",
             m_options.dataRate)
        .Type(ArgumentType::DataRate)
        .Unit("bit/s");
    table
        .Add("delay",
             "delay",
             "propagation delay of each link, a time with unit (ns, us, ms, s; e.g. 2ms)",
             m_options.delay)
        .Type(ArgumentType::Duration);
    table
        .Add("queueSize",
             "queue_size",
             "device transmit queue length (DropTail; no queue disc)",
             m_options.queueSize)
        .Unit("packets")
        .Min(1);
    table
        .Add("lossRate",
             "loss_rate",
             "probability that a packet is lost on reception at each hop (RateErrorModel, "
             "packet unit)",
             m_options.lossRate)
        .Unit("probability")
        .Min(0)
        .Max(1);
}

uint32_t
P2pNetworkBuilder::ResolveNodeCount(uint32_t requested) const
{
    return requested == 0 ? 2 : requested;
}

std::optional<std::string>
P2pNetworkBuilder::Validate(const NetworkRequest& request) const
{
    auto parsed = ParseP2pOptions(m_options, request.nodeCount);
    if (auto* error = std::get_if<std::string>(&parsed))
    {
        return *error;
    }
    if (request.background.nodes > 0)
    {
        return "--bgNodes=" + std::to_string(request.background.nodes) +
               ": point-to-point links are not shared, so background nodes cannot contend with "
               "the loops; use wifi, wave or lte";
    }
    auto positions = ResolvePositions(request.placement, request.nodeCount, 0, "nodes");
    if (auto* error = std::get_if<std::string>(&positions))
    {
        return *error;
    }
    return std::nullopt;
}

BuiltNetwork
P2pNetworkBuilder::Build(const NetworkRequest& request, int64_t stream)
{
    BuiltNetwork built =
        BuildP2pNetwork(std::get<P2pParameters>(ParseP2pOptions(m_options, request.nodeCount)),
                        request.nodeCount,
                        stream);
    InstallConstantVelocity(
        built.nodes,
        std::get<std::vector<ns3::Vector>>(
            ResolvePositions(request.placement, request.nodeCount, 0, "nodes")));
    return built;
}

} // namespace netloop
