#include "drop-traces.h"

#include "ns3/ipv4-l3-protocol.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/queue-disc.h"
#include "ns3/queue.h"
#include "ns3/traffic-control-layer.h"

namespace netloop
{

NS_LOG_COMPONENT_DEFINE("NetloopDropTraces");

using ns3::Ptr;

DropTraceConnections::~DropTraceConnections()
{
    DisconnectAll();
}

bool
DropTraceConnections::Connect(Ptr<ns3::Object> object,
                              const std::string& name,
                              const ns3::CallbackBase& callback)
{
    if (!object->TraceConnectWithoutContext(name, callback))
    {
        return false;
    }
    m_connections.push_back(Connection{object, name, callback});
    NS_LOG_DEBUG("hooked " << object->GetInstanceTypeId().GetName() << "::" << name);
    return true;
}

void
DropTraceConnections::DisconnectAll()
{
    for (auto& c : m_connections)
    {
        c.object->TraceDisconnectWithoutContext(c.name, c.callback);
    }
    m_connections.clear();
}

std::vector<std::string>
DropTraceConnections::Describe() const
{
    std::vector<std::string> out;
    out.reserve(m_connections.size());
    for (const auto& c : m_connections)
    {
        out.push_back(c.object->GetInstanceTypeId().GetName() + "::" + c.name);
    }
    return out;
}

namespace
{

wire::DropReason
Ipv4DropReason(ns3::Ipv4L3Protocol::DropReason reason)
{
    switch (reason)
    {
    case ns3::Ipv4L3Protocol::DROP_NO_ROUTE:
    case ns3::Ipv4L3Protocol::DROP_ROUTE_ERROR:
    case ns3::Ipv4L3Protocol::DROP_TTL_EXPIRED:
        return wire::DropReason::Routing;
    default:
        return wire::DropReason::Other;
    }
}

const char*
Ipv4DropName(ns3::Ipv4L3Protocol::DropReason reason)
{
    switch (reason)
    {
    case ns3::Ipv4L3Protocol::DROP_TTL_EXPIRED:
        return "DROP_TTL_EXPIRED";
    case ns3::Ipv4L3Protocol::DROP_NO_ROUTE:
        return "DROP_NO_ROUTE";
    case ns3::Ipv4L3Protocol::DROP_BAD_CHECKSUM:
        return "DROP_BAD_CHECKSUM";
    case ns3::Ipv4L3Protocol::DROP_INTERFACE_DOWN:
        return "DROP_INTERFACE_DOWN";
    case ns3::Ipv4L3Protocol::DROP_ROUTE_ERROR:
        return "DROP_ROUTE_ERROR";
    case ns3::Ipv4L3Protocol::DROP_FRAGMENT_TIMEOUT:
        return "DROP_FRAGMENT_TIMEOUT";
    case ns3::Ipv4L3Protocol::DROP_DUPLICATE:
        return "DROP_DUPLICATE";
    }
    return "DROP_UNKNOWN";
}

} // namespace

ns3::Callback<void, Ptr<const ns3::Packet>>
PacketDropCallback(DropSink* sink,
                   uint32_t nodeIndex,
                   wire::DropReason reason,
                   const DropOrigin& origin)
{
    return ns3::Callback<void, Ptr<const ns3::Packet>>(
        [sink, nodeIndex, reason, origin](Ptr<const ns3::Packet> packet) {
            sink->ObserveDrop(packet, nodeIndex, reason, origin);
        });
}

uint32_t
HookIpv4Drops(Ptr<ns3::Node> node,
              uint32_t nodeIndex,
              DropSink* sink,
              DropTraceConnections& connections)
{
    Ptr<ns3::Ipv4L3Protocol> ipv4 = node->GetObject<ns3::Ipv4L3Protocol>();
    if (!ipv4)
    {
        return 0;
    }
    ns3::Callback<void,
                  const ns3::Ipv4Header&,
                  Ptr<const ns3::Packet>,
                  ns3::Ipv4L3Protocol::DropReason,
                  Ptr<ns3::Ipv4>,
                  uint32_t>
        cb([sink, nodeIndex](const ns3::Ipv4Header&,
                             Ptr<const ns3::Packet> packet,
                             ns3::Ipv4L3Protocol::DropReason reason,
                             Ptr<ns3::Ipv4>,
                             uint32_t) {
            sink->ObserveDrop(packet,
                              nodeIndex,
                              Ipv4DropReason(reason),
                              DropOrigin{"Ipv4L3Protocol::Drop", Ipv4DropName(reason), true});
        });
    return connections.Connect(ipv4, "Drop", cb) ? 1 : 0;
}

uint32_t
HookTrafficControlDrops(Ptr<ns3::Node> node,
                        uint32_t nodeIndex,
                        DropSink* sink,
                        DropTraceConnections& connections)
{
    Ptr<ns3::TrafficControlLayer> tc = node->GetObject<ns3::TrafficControlLayer>();
    if (!tc)
    {
        return 0;
    }
    uint32_t hooked = 0;
    if (connections.Connect(
            tc,
            "TcDrop",
            PacketDropCallback(
                sink,
                nodeIndex,
                wire::DropReason::Queue,
                DropOrigin{"TrafficControlLayer::TcDrop", "device queue stopped", true})))
    {
        ++hooked;
    }
    for (uint32_t i = 0; i < node->GetNDevices(); ++i)
    {
        Ptr<ns3::QueueDisc> qdisc = tc->GetRootQueueDiscOnDevice(node->GetDevice(i));
        if (!qdisc)
        {
            continue;
        }
        ns3::Callback<void, Ptr<const ns3::QueueDiscItem>> cb(
            [sink, nodeIndex](Ptr<const ns3::QueueDiscItem> item) {
                sink->ObserveDrop(item->GetPacket(),
                                  nodeIndex,
                                  wire::DropReason::Queue,
                                  DropOrigin{"QueueDisc::Drop", "queue disc full or AQM", true});
            });
        if (connections.Connect(qdisc, "Drop", cb))
        {
            ++hooked;
        }
    }
    return hooked;
}

uint32_t
HookPointToPointDrops(Ptr<ns3::PointToPointNetDevice> device,
                      uint32_t nodeIndex,
                      DropSink* sink,
                      DropTraceConnections& connections)
{
    struct Source
    {
        const char* name;
        wire::DropReason reason;
        DropOrigin origin;
    };

    const Source sources[] = {
        {"PhyRxDrop",
         wire::DropReason::Phy,
         {"PointToPointNetDevice::PhyRxDrop", "receive error model", true}},
        {"PhyTxDrop",
         wire::DropReason::Phy,
         {"PointToPointNetDevice::PhyTxDrop", "transmitter busy or link down", true}},
        {"MacTxDrop",
         wire::DropReason::Queue,
         {"PointToPointNetDevice::MacTxDrop", "device queue full or link down", true}},
    };
    uint32_t hooked = 0;
    for (const Source& s : sources)
    {
        if (connections.Connect(device,
                                s.name,
                                PacketDropCallback(sink, nodeIndex, s.reason, s.origin)))
        {
            ++hooked;
        }
    }
    if (Ptr<ns3::Queue<ns3::Packet>> queue = device->GetQueue())
    {
        if (connections.Connect(
                queue,
                "Drop",
                PacketDropCallback(sink,
                                   nodeIndex,
                                   wire::DropReason::Queue,
                                   DropOrigin{"DropTailQueue::Drop", "device queue full", true})))
        {
            ++hooked;
        }
    }
    return hooked;
}

uint32_t
HookStandardDrops(const ns3::NodeContainer& nodes,
                  DropSink* sink,
                  DropTraceConnections& connections)
{
    uint32_t hooked = 0;
    for (uint32_t i = 0; i < nodes.GetN(); ++i)
    {
        Ptr<ns3::Node> node = nodes.Get(i);
        hooked += HookIpv4Drops(node, i, sink, connections);
        hooked += HookTrafficControlDrops(node, i, sink, connections);
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            auto p2p = ns3::DynamicCast<ns3::PointToPointNetDevice>(node->GetDevice(d));
            if (p2p)
            {
                hooked += HookPointToPointDrops(p2p, i, sink, connections);
            }
        }
    }
    return hooked;
}

} // namespace netloop
