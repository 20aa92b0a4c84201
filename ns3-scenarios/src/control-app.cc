#include "control-app.h"

#include "netloop-tags.h"

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/udp-socket-factory.h"

#include <algorithm>

namespace netloop
{

NS_LOG_COMPONENT_DEFINE("NetloopControlApp");

NS_OBJECT_ENSURE_REGISTERED(ControlApp);

using ns3::Ptr;

namespace
{

/// A readable name for a socket errno.
std::string
ErrnoName(ns3::Socket::SocketErrno error)
{
    switch (error)
    {
    case ns3::Socket::ERROR_NOTERROR:
        return "no error";
    case ns3::Socket::ERROR_ISCONN:
        return "already connected";
    case ns3::Socket::ERROR_NOTCONN:
        return "not connected";
    case ns3::Socket::ERROR_MSGSIZE:
        return "message too long";
    case ns3::Socket::ERROR_AGAIN:
        return "try again";
    case ns3::Socket::ERROR_SHUTDOWN:
        return "socket shut down";
    case ns3::Socket::ERROR_OPNOTSUPP:
        return "operation not supported";
    case ns3::Socket::ERROR_AFNOSUPPORT:
        return "address family not supported";
    case ns3::Socket::ERROR_INVAL:
        return "invalid argument";
    case ns3::Socket::ERROR_BADF:
        return "bad socket";
    case ns3::Socket::ERROR_NOROUTETOHOST:
        return "no route to host";
    case ns3::Socket::ERROR_NODEV:
        return "no device";
    case ns3::Socket::ERROR_ADDRNOTAVAIL:
        return "address not available";
    case ns3::Socket::ERROR_ADDRINUSE:
        return "address in use";
    default:
        return "socket error " + std::to_string(static_cast<int>(error));
    }
}

} // namespace

ns3::TypeId
ControlApp::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("netloop::ControlApp")
            .SetParent<ns3::Application>()
            .SetGroupName("Netloop")
            .AddConstructor<ControlApp>()
            .AddTraceSource("Tx",
                            "A control packet is handed to the UDP socket",
                            ns3::MakeTraceSourceAccessor(&ControlApp::m_txTrace),
                            "netloop::ControlApp::FlowPacketCallback")
            .AddTraceSource("TxFailed",
                            "The UDP socket refused a control packet",
                            ns3::MakeTraceSourceAccessor(&ControlApp::m_txFailedTrace),
                            "netloop::ControlApp::FlowPacketErrnoCallback")
            .AddTraceSource("Rx",
                            "A control packet arrived on a flow's port",
                            ns3::MakeTraceSourceAccessor(&ControlApp::m_rxTrace),
                            "netloop::ControlApp::FlowPacketCallback")
            .AddTraceSource("TcpTx",
                            "A control message of a TCP flow is written (or queued) for sending",
                            ns3::MakeTraceSourceAccessor(&ControlApp::m_tcpTxTrace),
                            "netloop::ControlApp::FlowMessageCallback")
            .AddTraceSource("TcpRx",
                            "Bytes of a TCP flow arrived at its receiving application",
                            ns3::MakeTraceSourceAccessor(&ControlApp::m_tcpRxTrace),
                            "netloop::ControlApp::FlowBytesCallback")
            .AddTraceSource("TcpFailed",
                            "The connection of a TCP flow could not be opened or broke",
                            ns3::MakeTraceSourceAccessor(&ControlApp::m_tcpFailedTrace),
                            "netloop::ControlApp::FlowCallback");
    return tid;
}

ControlApp::ControlApp()
{
    NS_LOG_FUNCTION(this);
}

ControlApp::~ControlApp()
{
    NS_LOG_FUNCTION(this);
}

bool
ControlApp::OpenSendSocket(std::string* error)
{
    NS_LOG_FUNCTION(this);
    if (m_sendSocket)
    {
        return true;
    }
    Ptr<ns3::Socket> socket =
        ns3::Socket::CreateSocket(GetNode(), ns3::UdpSocketFactory::GetTypeId());
    if (socket->Bind() != 0)
    {
        *error = "node " + std::to_string(GetNode()->GetId()) +
                 ": cannot open the sending UDP socket: " + ErrnoName(socket->GetErrno());
        socket->Close();
        return false;
    }
    m_sendSocket = socket;
    return true;
}

bool
ControlApp::Listen(uint32_t flow, uint16_t port, std::string* error)
{
    NS_LOG_FUNCTION(this << flow << port);
    Ptr<ns3::Socket> socket =
        ns3::Socket::CreateSocket(GetNode(), ns3::UdpSocketFactory::GetTypeId());
    if (socket->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), port)) != 0)
    {
        *error = "flow " + std::to_string(flow) + ": cannot bind UDP port " + std::to_string(port) +
                 ": " + ErrnoName(socket->GetErrno());
        socket->Close();
        return false;
    }
    socket->SetRecvCallback(ns3::MakeCallback(&ControlApp::HandleRead, this));
    m_recvSockets[socket] = flow;
    return true;
}

bool
ControlApp::OpenTcpSender(uint32_t flow,
                          ns3::Ipv4Address destination,
                          uint16_t port,
                          std::string* error)
{
    NS_LOG_FUNCTION(this << flow << destination << port);
    Ptr<ns3::Socket> socket =
        ns3::Socket::CreateSocket(GetNode(), ns3::TcpSocketFactory::GetTypeId());
    if (socket->Bind() != 0)
    {
        *error = "flow " + std::to_string(flow) +
                 ": cannot open its TCP socket: " + ErrnoName(socket->GetErrno());
        socket->Close();
        return false;
    }
    TcpSender sender;
    sender.socket = socket;
    sender.destination = destination;
    sender.port = port;
    m_tcpSenders[flow] = sender;
    socket->SetConnectCallback(
        ns3::Callback<void, Ptr<ns3::Socket>>([this, flow](Ptr<ns3::Socket>) { FillTcp(flow); }),
        ns3::Callback<void, Ptr<ns3::Socket>>([this, flow](Ptr<ns3::Socket>) { FailTcp(flow); }));
    socket->SetCloseCallbacks(
        ns3::Callback<void, Ptr<ns3::Socket>>([this, flow](Ptr<ns3::Socket>) { FailTcp(flow); }),
        ns3::Callback<void, Ptr<ns3::Socket>>([this, flow](Ptr<ns3::Socket>) { FailTcp(flow); }));
    socket->SetSendCallback(ns3::Callback<void, Ptr<ns3::Socket>, uint32_t>(
        [this, flow](Ptr<ns3::Socket>, uint32_t) { FillTcp(flow); }));
    // As an event on this node at the current time: the SYN leaves in the first step.
    ns3::Simulator::ScheduleWithContext(GetNode()->GetId(),
                                        ns3::Seconds(0),
                                        &ControlApp::ConnectTcp,
                                        this,
                                        flow);
    return true;
}

void
ControlApp::ConnectTcp(uint32_t flow)
{
    auto it = m_tcpSenders.find(flow);
    if (it == m_tcpSenders.end() || !it->second.socket)
    {
        return;
    }
    TcpSender& sender = it->second;
    if (sender.socket->Connect(ns3::InetSocketAddress(sender.destination, sender.port)) != 0)
    {
        NS_LOG_WARN("flow " << flow
                            << ": TCP connect failed: " << ErrnoName(sender.socket->GetErrno()));
        FailTcp(flow);
    }
}

bool
ControlApp::ListenTcp(uint32_t flow, uint16_t port, std::string* error)
{
    NS_LOG_FUNCTION(this << flow << port);
    Ptr<ns3::Socket> socket =
        ns3::Socket::CreateSocket(GetNode(), ns3::TcpSocketFactory::GetTypeId());
    if (socket->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), port)) != 0 ||
        socket->Listen() != 0)
    {
        *error = "flow " + std::to_string(flow) + ": cannot listen on TCP port " +
                 std::to_string(port) + ": " + ErrnoName(socket->GetErrno());
        socket->Close();
        return false;
    }
    socket->SetAcceptCallback(ns3::MakeNullCallback<bool, Ptr<ns3::Socket>, const ns3::Address&>(),
                              ns3::Callback<void, Ptr<ns3::Socket>, const ns3::Address&>(
                                  [this, flow](Ptr<ns3::Socket> accepted, const ns3::Address&) {
                                      accepted->SetRecvCallback(
                                          ns3::MakeCallback(&ControlApp::HandleTcpRead, this));
                                      m_tcpReceivers[accepted] = flow;
                                  }));
    m_tcpListeners[socket] = flow;
    return true;
}

uint64_t
ControlApp::GetTcpBacklog(uint32_t flow) const
{
    auto it = m_tcpSenders.find(flow);
    return it == m_tcpSenders.end() ? 0 : it->second.backlog;
}

void
ControlApp::FillTcp(uint32_t flow)
{
    auto it = m_tcpSenders.find(flow);
    if (it == m_tcpSenders.end() || it->second.failed || !it->second.socket)
    {
        return;
    }
    TcpSender& sender = it->second;
    while (sender.backlog > 0)
    {
        const uint64_t room = sender.socket->GetTxAvailable();
        if (room == 0)
        {
            return; // the send callback calls again when the buffer drains
        }
        const auto chunk = static_cast<uint32_t>(std::min<uint64_t>(sender.backlog, room));
        const int written = sender.socket->Send(ns3::Create<ns3::Packet>(chunk));
        if (written <= 0)
        {
            return; // not connected yet: the connect callback calls again
        }
        sender.backlog -= static_cast<uint64_t>(written);
    }
}

void
ControlApp::FailTcp(uint32_t flow)
{
    auto it = m_tcpSenders.find(flow);
    if (it == m_tcpSenders.end() || it->second.failed)
    {
        return;
    }
    NS_LOG_WARN("flow " << flow << ": the TCP connection failed or closed");
    it->second.failed = true;
    it->second.backlog = 0;
    m_tcpFailedTrace(flow);
}

void
ControlApp::HandleTcpRead(Ptr<ns3::Socket> socket)
{
    auto it = m_tcpReceivers.find(socket);
    if (it == m_tcpReceivers.end())
    {
        return;
    }
    while (Ptr<ns3::Packet> packet = socket->Recv())
    {
        if (packet->GetSize() == 0)
        {
            break;
        }
        m_tcpRxTrace(it->second, packet->GetSize());
    }
}

void
ControlApp::Send(uint32_t flow, ns3::Ipv4Address destination, ControlPacket spec)
{
    NS_LOG_FUNCTION(this << flow << destination << spec.number);
    if (auto tcp = m_tcpSenders.find(flow); tcp != m_tcpSenders.end())
    {
        m_tcpTxTrace(flow, spec);
        if (tcp->second.failed)
        {
            m_tcpFailedTrace(flow);
            return;
        }
        tcp->second.backlog += spec.size;
        FillTcp(flow);
        return;
    }
    Ptr<ns3::Packet> packet = ns3::Create<ns3::Packet>(spec.size);
    // The identity: a byte tag over the payload survives what RLC and IP do to packets.
    ControlTag identity;
    identity.serial = spec.serial;
    identity.flow = flow;
    identity.number = spec.number;
    identity.port = spec.port;
    identity.stateIndex = spec.stateIndex;
    identity.stateCount = spec.stateCount;
    identity.sentNs = spec.sentNs;
    packet->AddByteTag(identity);
    packet->AddPacketTag(PacketNumTag(spec.number));
    packet->AddPacketTag(PacketPortTag(spec.port));
    packet->AddPacketTag(StateNumTag(spec.stateIndex, spec.stateCount));
    packet->AddPacketTag(SendTimeTag(spec.sentNs));
    // Traced before the socket sees it: a drop inside SendTo must find it already sent.
    m_txTrace(flow, packet);
    if (!m_sendSocket)
    {
        m_txFailedTrace(flow, packet, ns3::Socket::ERROR_BADF);
        return;
    }
    if (m_sendSocket->SendTo(packet, 0, ns3::InetSocketAddress(destination, spec.port)) < 0)
    {
        NS_LOG_WARN("flow " << flow << " packet " << spec.number
                            << " refused: " << ErrnoName(m_sendSocket->GetErrno()));
        m_txFailedTrace(flow, packet, m_sendSocket->GetErrno());
    }
}

void
ControlApp::HandleRead(Ptr<ns3::Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    auto it = m_recvSockets.find(socket);
    if (it == m_recvSockets.end())
    {
        return;
    }
    ns3::Address from;
    while (Ptr<ns3::Packet> packet = socket->RecvFrom(from))
    {
        m_rxTrace(it->second, packet);
    }
}

void
ControlApp::StartApplication()
{
    NS_LOG_FUNCTION(this);
}

void
ControlApp::StopApplication()
{
    NS_LOG_FUNCTION(this);
    CloseSockets();
}

void
ControlApp::CloseSockets()
{
    if (m_sendSocket)
    {
        m_sendSocket->Close();
        m_sendSocket = nullptr;
    }
    for (auto& [socket, flow] : m_recvSockets)
    {
        socket->SetRecvCallback(ns3::MakeNullCallback<void, Ptr<ns3::Socket>>());
        socket->Close();
    }
    m_recvSockets.clear();
    for (auto& [flow, sender] : m_tcpSenders)
    {
        if (sender.socket)
        {
            sender.socket->SetCloseCallbacks(ns3::MakeNullCallback<void, Ptr<ns3::Socket>>(),
                                             ns3::MakeNullCallback<void, Ptr<ns3::Socket>>());
            sender.socket->SetSendCallback(
                ns3::MakeNullCallback<void, Ptr<ns3::Socket>, uint32_t>());
            sender.socket->Close();
            sender.socket = nullptr;
        }
    }
    m_tcpSenders.clear();
    for (auto* sockets : {&m_tcpListeners, &m_tcpReceivers})
    {
        for (auto& [socket, flow] : *sockets)
        {
            socket->SetRecvCallback(ns3::MakeNullCallback<void, Ptr<ns3::Socket>>());
            socket->Close();
        }
        sockets->clear();
    }
}

void
ControlApp::DoDispose()
{
    NS_LOG_FUNCTION(this);
    CloseSockets();
    ns3::Application::DoDispose();
}

} // namespace netloop
