#include "control-app.h"

#include "netloop-tags.h"

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/udp-socket-factory.h"

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
                            "netloop::ControlApp::FlowPacketCallback");
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

void
ControlApp::Send(uint32_t flow, ns3::Ipv4Address destination, ControlPacket spec)
{
    NS_LOG_FUNCTION(this << flow << destination << spec.number);
    Ptr<ns3::Packet> packet = ns3::Create<ns3::Packet>(spec.size);
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
}

void
ControlApp::DoDispose()
{
    NS_LOG_FUNCTION(this);
    CloseSockets();
    ns3::Application::DoDispose();
}

} // namespace netloop
