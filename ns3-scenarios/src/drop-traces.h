/*
 * Hooks ns-3 drop trace sources and reports every drop to a DropSink, with
 * the node index and a DropReason.
 */
#ifndef NETLOOP_DROP_TRACES_H
#define NETLOOP_DROP_TRACES_H

#include "wire.h"

#include "ns3/callback.h"
#include "ns3/node-container.h"
#include "ns3/object.h"
#include "ns3/packet.h"
#include "ns3/point-to-point-net-device.h"

#include <cstdint>
#include <string>
#include <vector>

namespace netloop
{

/**
 * \brief Where a drop was seen: the trace source, ns-3's own reason, and
 * whether the packet is lost there.
 *
 * Strings are static (string literals or enum names), so building an origin
 * costs nothing on the hot path.
 */
struct DropOrigin
{
    const char* source = ""; //!< the trace source, e.g. "WifiPhy::PhyRxDrop"
    const char* detail = ""; //!< ns-3's reason, e.g. "PREAMBLE_DETECT_FAILURE"
    /**
     * True when the packet dies here (a queue overflow, the MAC giving up
     * after its retries, no route). False for an observation that is not the
     * packet's fate: a failed reception the MAC will retry, a frame overheard
     * by a third node. Only fatal drops are reported to the bridge; the drop
     * log records both.
     */
    bool fatal = true;
};

/**
 * \brief Receives the drops seen by the hooked trace sources.
 *
 * The sink decides what a drop means: the stepping core reports only the
 * first fatal drop of each control packet it sent and ignores everything
 * else (and writes both kinds to the drop log, when there is one).
 */
class DropSink
{
  public:
    virtual ~DropSink() = default;
    /**
     * A fatal drop.
     * \param packet the packet as the trace source saw it (with its packet tags)
     * \param nodeIndex index of the node in the served NodeContainer
     * \param reason where it died
     */
    virtual void ReportDrop(ns3::Ptr<const ns3::Packet> packet,
                            uint32_t nodeIndex,
                            wire::DropReason reason) = 0;

    /**
     * A drop with its origin; every hook calls this. The default forwards
     * fatal drops to ReportDrop() and ignores observations.
     */
    virtual void ObserveDrop(ns3::Ptr<const ns3::Packet> packet,
                             uint32_t nodeIndex,
                             wire::DropReason reason,
                             const DropOrigin& origin)
    {
        if (origin.fatal)
        {
            ReportDrop(packet, nodeIndex, reason);
        }
    }
};

/**
 * \brief The trace connections made for a sink, so they can be undone.
 *
 * The connected callbacks hold a plain pointer to the sink: disconnect before
 * the sink goes away (the stepping core does so in its destructor).
 */
class DropTraceConnections
{
  public:
    DropTraceConnections() = default;
    ~DropTraceConnections();
    DropTraceConnections(const DropTraceConnections&) = delete;
    DropTraceConnections& operator=(const DropTraceConnections&) = delete;

    /**
     * Connects a callback to a trace source and remembers it.
     * \return whether the object has a trace source of that name
     */
    bool Connect(ns3::Ptr<ns3::Object> object,
                 const std::string& name,
                 const ns3::CallbackBase& callback);
    /// Disconnects everything connected so far.
    void DisconnectAll();
    /// \return the "TypeName::TraceSource" of every connection, for logs and tests
    std::vector<std::string> Describe() const;

  private:
    /// One trace connection.
    struct Connection
    {
        ns3::Ptr<ns3::Object> object; //!< the traced object
        std::string name;             //!< trace source name
        ns3::CallbackBase callback;   //!< the connected callback
    };

    std::vector<Connection> m_connections; //!< everything connected
};

/**
 * A callback for trace sources of signature void (Ptr<const Packet>) that
 * passes every packet to sink->ObserveDrop with this node, reason and origin.
 */
ns3::Callback<void, ns3::Ptr<const ns3::Packet>> PacketDropCallback(DropSink* sink,
                                                                    uint32_t nodeIndex,
                                                                    wire::DropReason reason,
                                                                    const DropOrigin& origin);

/**
 * Ipv4L3Protocol "Drop": no route, route error and TTL expired are Routing;
 * bad checksum, interface down, fragment timeout and duplicates are Other.
 * \return the number of trace sources connected (0 if the node has no IPv4)
 */
uint32_t HookIpv4Drops(ns3::Ptr<ns3::Node> node,
                       uint32_t nodeIndex,
                       DropSink* sink,
                       DropTraceConnections& connections);

/**
 * TrafficControlLayer "TcDrop" (device queue stopped and no queue disc) and the
 * "Drop" of each root queue disc installed on the node's devices: Queue.
 * \return the number of trace sources connected
 */
uint32_t HookTrafficControlDrops(ns3::Ptr<ns3::Node> node,
                                 uint32_t nodeIndex,
                                 DropSink* sink,
                                 DropTraceConnections& connections);

/**
 * A point-to-point device: PhyRxDrop (receive error model) and PhyTxDrop are
 * Phy; MacTxDrop (device queue full, link down) and the device queue's "Drop"
 * (TxQueue) are Queue.
 * \return the number of trace sources connected
 */
uint32_t HookPointToPointDrops(ns3::Ptr<ns3::PointToPointNetDevice> device,
                               uint32_t nodeIndex,
                               DropSink* sink,
                               DropTraceConnections& connections);

/**
 * Every drop trace above on every node of the container (node index = its
 * position in the container) and on each of its point-to-point devices.
 * Builders of other network kinds hook their own devices' traces in addition.
 * \return the number of trace sources connected
 */
uint32_t HookStandardDrops(const ns3::NodeContainer& nodes,
                           DropSink* sink,
                           DropTraceConnections& connections);

} // namespace netloop

#endif // NETLOOP_DROP_TRACES_H
