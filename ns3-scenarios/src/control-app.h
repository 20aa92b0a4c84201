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
};

/**
 * \brief Sends and receives the control packets of one node over UDP.
 *
 * One instance runs on every node. It owns one unbound UDP socket for all the
 * flows the node sends, and one socket bound to each flow's port for the
 * flows it receives. Send() builds a packet of the requested payload size,
 * adds PacketNumTag, PacketPortTag, StateNumTag and SendTimeTag, and sends it
 * at once; the stepping core schedules the call at the exact send time.
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
     * Sends one tagged control packet now.
     * \param flow the flow id
     * \param destination the receiving node's address
     * \param packet the tag values and the payload size
     */
    void Send(uint32_t flow, ns3::Ipv4Address destination, ControlPacket packet);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    /// Socket receive callback: reports every waiting packet.
    void HandleRead(ns3::Ptr<ns3::Socket> socket);
    /// Closes every socket.
    void CloseSockets();

    ns3::Ptr<ns3::Socket> m_sendSocket;                      //!< socket of all outgoing flows
    std::map<ns3::Ptr<ns3::Socket>, uint32_t> m_recvSockets; //!< socket -> flow id
    ns3::TracedCallback<uint32_t, ns3::Ptr<const ns3::Packet>> m_txTrace; //!< Tx
    ns3::TracedCallback<uint32_t, ns3::Ptr<const ns3::Packet>, ns3::Socket::SocketErrno>
        m_txFailedTrace;                                                  //!< TxFailed
    ns3::TracedCallback<uint32_t, ns3::Ptr<const ns3::Packet>> m_rxTrace; //!< Rx
};

} // namespace netloop

#endif // NETLOOP_CONTROL_APP_H
