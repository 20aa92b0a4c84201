/*
 * The UDP control application the stepping core installs on every node.
 */
#ifndef NETLOOP_CONTROL_APP_H
#define NETLOOP_CONTROL_APP_H

#include "ns3/application.h"
#include "ns3/ipv4-address.h"
#include "ns3/packet.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <map>
#include <string>

namespace netloop
{

/// What the bridge asked to send: the values of the four tags and the payload size.
struct ControlPacket
{
    uint64_t number = 0;     //!< PacketNumTag
    uint16_t port = 0;       //!< PacketPortTag (the flow's destination port)
    uint16_t stateIndex = 0; //!< StateNumTag index
    uint16_t stateCount = 1; //!< StateNumTag count
    uint64_t sentNs = 0;     //!< SendTimeTag: the requested send time, ns
    uint32_t size = 0;       //!< payload bytes (padding stands in for the values)
    uint64_t serial = 0;     //!< ControlTag serial: the packet's identity in the StepEngine
};

/**
 * \brief Sends and receives the control packets of one node over UDP or TCP.
 *
 * One instance runs on every node. UDP: it owns one unbound UDP socket for all
 * the flows the node sends, and one socket bound to each flow's port for the
 * flows it receives. Send() builds a packet of the requested payload size,
 * adds the ControlTag byte tag (its identity) and the PacketNumTag,
 * PacketPortTag, StateNumTag and SendTimeTag packet tags, and sends it at
 * once; the stepping core schedules the call at the exact send time.
 *
 * TCP: one connection per flow, opened when the run is configured (the SYN
 * goes out at t = 0). Send() writes the packet's size in (untagged) bytes
 * into the flow's socket; what the socket cannot take yet waits in the
 * application and is written as the send buffer drains, so nothing is lost
 * above TCP. The receiving side reports how many bytes arrive; the stepping
 * core frames them back into messages (MessageFramer).
 *
 * Sockets are opened by Listen()/OpenSendSocket() when the run is configured,
 * not in StartApplication(): the application's start event runs only once the
 * simulator runs, after sends scheduled for t = 0 might already be due.
 *
 * Trace sources (flow id, packet): "Tx" just before a packet goes to the
 * socket; "TxFailed" when the socket refuses it (with the socket errno);
 * "Rx" for every packet received on a flow's port, at its arrival time.
 */
class ControlApp : public ns3::Application
{
  public:
    /// \return the TypeId
    static ns3::TypeId GetTypeId();
    ControlApp();
    ~ControlApp() override;

    /// Signature of the Tx and Rx trace sources.
    typedef void (*FlowPacketCallback)(uint32_t flow, ns3::Ptr<const ns3::Packet> packet);
    /// Signature of the TxFailed trace source.
    typedef void (*FlowPacketErrnoCallback)(uint32_t flow,
                                            ns3::Ptr<const ns3::Packet> packet,
                                            ns3::Socket::SocketErrno error);
    /// Signature of the TcpTx trace source.
    typedef void (*FlowMessageCallback)(uint32_t flow, ControlPacket message);
    /// Signature of the TcpRx trace source.
    typedef void (*FlowBytesCallback)(uint32_t flow, uint32_t bytes);
    /// Signature of the TcpFailed trace source.
    typedef void (*FlowCallback)(uint32_t flow);

    /**
     * Opens the UDP socket the node's flows are sent from.
     * \param error set to the reason on failure
     * \return whether the socket is open
     */
    bool OpenSendSocket(std::string* error);

    /**
     * Opens a UDP socket bound to a flow's port on every address of the node.
     * \param flow the flow id reported with each received packet
     * \param port the port
     * \param error set to the reason on failure (e.g. the port is taken)
     * \return whether the socket is bound
     */
    bool Listen(uint32_t flow, uint16_t port, std::string* error);

    /**
     * Opens the TCP connection of a flow this node sends: binds a socket now,
     * connects at the current simulated time (as an event on this node).
     * \param flow the flow id
     * \param destination the receiving node's address
     * \param port the flow's port there
     * \param error set to the reason on failure
     * \return whether the socket is bound
     */
    bool OpenTcpSender(uint32_t flow,
                       ns3::Ipv4Address destination,
                       uint16_t port,
                       std::string* error);

    /**
     * Listens for the TCP connection of a flow this node receives.
     * \param flow the flow id reported with received bytes
     * \param port the flow's port
     * \param error set to the reason on failure
     * \return whether the socket listens
     */
    bool ListenTcp(uint32_t flow, uint16_t port, std::string* error);

    /**
     * Sends one control packet now: a tagged UDP datagram, or, for a TCP flow,
     * its size in bytes written into the flow's connection (traced as TcpTx).
     * \param flow the flow id
     * \param destination the receiving node's address
     * \param packet the tag values and the payload size
     */
    void Send(uint32_t flow, ns3::Ipv4Address destination, ControlPacket packet);

    /// \return bytes of TCP flow messages waiting in the application (not yet in the socket)
    uint64_t GetTcpBacklog(uint32_t flow) const;

  protected:
    void DoDispose() override;

  private:
    /// The sending end of a TCP flow.
    struct TcpSender
    {
        ns3::Ptr<ns3::Socket> socket; //!< the connection
        ns3::Ipv4Address destination; //!< receiving node
        uint16_t port = 0;            //!< flow port there
        uint64_t backlog = 0;         //!< bytes not yet accepted by the socket
        bool failed = false;          //!< the connection failed or broke
    };

    void StartApplication() override;
    void StopApplication() override;
    /// Socket receive callback: reports every waiting packet.
    void HandleRead(ns3::Ptr<ns3::Socket> socket);
    /// Receive callback of an accepted TCP connection: reports the bytes.
    void HandleTcpRead(ns3::Ptr<ns3::Socket> socket);
    /// Connects a TCP flow's socket (scheduled by OpenTcpSender).
    void ConnectTcp(uint32_t flow);
    /// Writes as much of a TCP flow's backlog as its socket takes.
    void FillTcp(uint32_t flow);
    /// The connection of a TCP flow failed or broke.
    void FailTcp(uint32_t flow);
    /// Closes every socket.
    void CloseSockets();

    ns3::Ptr<ns3::Socket> m_sendSocket;                      //!< socket of all outgoing flows
    std::map<ns3::Ptr<ns3::Socket>, uint32_t> m_recvSockets; //!< socket -> flow id
    ns3::TracedCallback<uint32_t, ns3::Ptr<const ns3::Packet>> m_txTrace; //!< Tx
    ns3::TracedCallback<uint32_t, ns3::Ptr<const ns3::Packet>, ns3::Socket::SocketErrno>
        m_txFailedTrace;                                                  //!< TxFailed
    ns3::TracedCallback<uint32_t, ns3::Ptr<const ns3::Packet>> m_rxTrace; //!< Rx
    std::map<uint32_t, TcpSender> m_tcpSenders;                           //!< flow -> sending end
    std::map<ns3::Ptr<ns3::Socket>, uint32_t> m_tcpListeners;  //!< listening socket -> flow
    std::map<ns3::Ptr<ns3::Socket>, uint32_t> m_tcpReceivers;  //!< accepted socket -> flow
    ns3::TracedCallback<uint32_t, ControlPacket> m_tcpTxTrace; //!< TcpTx
    ns3::TracedCallback<uint32_t, uint32_t> m_tcpRxTrace;      //!< TcpRx
    ns3::TracedCallback<uint32_t> m_tcpFailedTrace;            //!< TcpFailed
};

} // namespace netloop

#endif // NETLOOP_CONTROL_APP_H
