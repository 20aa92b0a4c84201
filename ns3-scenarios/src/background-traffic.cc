#include "background-traffic.h"

#include "wire.h"

#include "ns3/double.h"
#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet-sink-helper.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/udp-socket-factory.h"

#include <sstream>

namespace netloop
{

NS_LOG_COMPONENT_DEFINE("NetloopBackgroundTraffic");

NS_OBJECT_ENSURE_REGISTERED(BackgroundSender);

void
BackgroundOptions::DeclareArguments(ArgumentTable& table)
{
    table
        .Add("bgNodes",
             "nodes",
             "number of background nodes, beyond the addressable ones (not addressable by "
             "flows); 0 is none (and no sink)",
             nodes)
        .Required();
    table
        .Add("bgTraffic",
             "traffic",
             "cbr (constant bit rate), poisson (exponential packet intervals at the same mean "
             "rate) or on_off (exponential on and off periods, constant rate while on)",
             traffic)
        .Choices({{"cbr", "cbr"}, {"poisson", "poisson"}, {"on_off", "onoff"}});
    table.Add("bgRate", "rate", "rate per node while sending, as an ns-3 DataRate", rate)
        .Type(ArgumentType::DataRate)
        .Unit("bit/s");
    table.Add("bgPacketSize", "packet_size", "UDP payload of each packet", packetSize)
        .Unit("bytes")
        .Min(1)
        .Max(65507);
    table.Add("bgOn", "on", "on_off: mean on period, a time with unit", on)
        .Type(ArgumentType::Duration);
    table.Add("bgOff", "off", "on_off: mean off period, a time with unit", off)
        .Type(ArgumentType::Duration);
}

void
BackgroundOptions::AddArguments(CheckedCommandLine& cmd)
{
    ArgumentTable table;
    DeclareArguments(table);
    table.Register(cmd, "background");
}

std::variant<BackgroundParameters, std::string>
ParseBackgroundOptions(const BackgroundOptions& o)
{
    BackgroundParameters p;
    p.nodes = o.nodes;
    if (o.traffic == "cbr")
    {
        p.traffic = BackgroundTraffic::Cbr;
    }
    else if (o.traffic == "poisson")
    {
        p.traffic = BackgroundTraffic::Poisson;
    }
    else if (o.traffic == "onoff")
    {
        p.traffic = BackgroundTraffic::OnOff;
    }
    else
    {
        return "--bgTraffic=" + o.traffic + " is not a traffic model; use cbr, poisson or onoff";
    }
    ns3::DataRateValue rate;
    if (!rate.DeserializeFromString(o.rate, ns3::MakeDataRateChecker()) ||
        rate.Get().GetBitRate() == 0)
    {
        return "--bgRate=" + o.rate + " is not a positive data rate; write e.g. 500kbps";
    }
    p.rate = rate.Get();
    p.rateText = o.rate;
    if (o.packetSize == 0 || o.packetSize > 65507)
    {
        return "--bgPacketSize=" + std::to_string(o.packetSize) +
               " must be 1..65507 bytes (a UDP payload)";
    }
    p.packetSize = o.packetSize;
    std::string error;
    if (!wire::ParseDuration(o.on, &p.onNs, &error) || p.onNs == 0)
    {
        return "--bgOn=" + o.on + ": " + (error.empty() ? "must be longer than 0" : error);
    }
    if (!wire::ParseDuration(o.off, &p.offNs, &error) || p.offNs == 0)
    {
        return "--bgOff=" + o.off + ": " + (error.empty() ? "must be longer than 0" : error);
    }
    return p;
}

std::string
Describe(const BackgroundParameters& p)
{
    if (p.nodes == 0)
    {
        return "no background nodes";
    }
    std::ostringstream os;
    os << p.nodes << " background node" << (p.nodes == 1 ? "" : "s") << ", ";
    switch (p.traffic)
    {
    case BackgroundTraffic::Cbr:
        os << "cbr";
        break;
    case BackgroundTraffic::Poisson:
        os << "poisson";
        break;
    case BackgroundTraffic::OnOff:
        os << "onoff (on " << wire::FormatTime(p.onNs) << ", off " << wire::FormatTime(p.offNs)
           << ")";
        break;
    }
    os << " " << p.rateText << " of " << p.packetSize << "-byte packets each";
    return os.str();
}

ns3::TypeId
BackgroundSender::GetTypeId()
{
    static ns3::TypeId tid = ns3::TypeId("netloop::BackgroundSender")
                                 .SetParent<ns3::Application>()
                                 .SetGroupName("Netloop")
                                 .AddConstructor<BackgroundSender>();
    return tid;
}

BackgroundSender::BackgroundSender()
    : m_start(ns3::CreateObject<ns3::UniformRandomVariable>()),
      m_gaps(ns3::CreateObject<ns3::ExponentialRandomVariable>()),
      m_onPeriods(ns3::CreateObject<ns3::ExponentialRandomVariable>()),
      m_offPeriods(ns3::CreateObject<ns3::ExponentialRandomVariable>())
{
}

BackgroundSender::~BackgroundSender() = default;

void
BackgroundSender::Setup(const BackgroundParameters& parameters,
                        ns3::Ipv4Address destination,
                        uint16_t port)
{
    m_parameters = parameters;
    m_destination = destination;
    m_port = port;
    m_interval = parameters.rate.CalculateBytesTxTime(parameters.packetSize);
    m_gaps->SetAttribute("Mean", ns3::DoubleValue(m_interval.GetSeconds()));
    m_onPeriods->SetAttribute("Mean", ns3::DoubleValue(parameters.onNs * 1e-9));
    m_offPeriods->SetAttribute("Mean", ns3::DoubleValue(parameters.offNs * 1e-9));
}

int64_t
BackgroundSender::AssignStreams(int64_t stream)
{
    m_start->SetStream(stream);
    m_gaps->SetStream(stream + 1);
    m_onPeriods->SetStream(stream + 2);
    m_offPeriods->SetStream(stream + 3);
    return 4;
}

uint64_t
BackgroundSender::GetSent() const
{
    return m_sent;
}

void
BackgroundSender::DoDispose()
{
    m_event.Cancel();
    m_socket = nullptr;
    ns3::Application::DoDispose();
}

void
BackgroundSender::StartApplication()
{
    m_socket = ns3::Socket::CreateSocket(GetNode(), ns3::UdpSocketFactory::GetTypeId());
    m_socket->Bind();
    m_socket->Connect(ns3::InetSocketAddress(m_destination, m_port));
    // Uniform in [0, interval), whole nanoseconds.
    const ns3::Time offset = ns3::NanoSeconds(
        static_cast<int64_t>(m_start->GetValue(0.0, double(m_interval.GetNanoSeconds()))));
    if (m_parameters.traffic == BackgroundTraffic::OnOff)
    {
        m_event = ns3::Simulator::Schedule(offset, &BackgroundSender::StartOn, this);
    }
    else
    {
        m_event = ns3::Simulator::Schedule(offset, &BackgroundSender::SendAndSchedule, this);
    }
}

void
BackgroundSender::StopApplication()
{
    m_event.Cancel();
    if (m_socket)
    {
        m_socket->Close();
        m_socket = nullptr;
    }
}

void
BackgroundSender::SendOne()
{
    m_socket->Send(ns3::Create<ns3::Packet>(m_parameters.packetSize));
    ++m_sent;
}

void
BackgroundSender::SendAndSchedule()
{
    SendOne();
    const ns3::Time next = m_parameters.traffic == BackgroundTraffic::Poisson
                               ? ns3::Seconds(m_gaps->GetValue())
                               : m_interval;
    m_event = ns3::Simulator::Schedule(next, &BackgroundSender::SendAndSchedule, this);
}

void
BackgroundSender::StartOn()
{
    m_onEnd = ns3::Simulator::Now() + ns3::Seconds(m_onPeriods->GetValue());
    SendWhileOn();
}

void
BackgroundSender::SendWhileOn()
{
    if (ns3::Simulator::Now() >= m_onEnd)
    {
        m_event = ns3::Simulator::Schedule(ns3::Seconds(m_offPeriods->GetValue()),
                                           &BackgroundSender::StartOn,
                                           this);
        return;
    }
    SendOne();
    m_event = ns3::Simulator::Schedule(m_interval, &BackgroundSender::SendWhileOn, this);
}

int64_t
InstallBackgroundTraffic(const BackgroundParameters& parameters,
                         const ns3::NodeContainer& senders,
                         ns3::Ptr<ns3::Node> sink,
                         ns3::Ipv4Address sinkAddress,
                         int64_t stream)
{
    if (senders.GetN() == 0)
    {
        return 0;
    }
    const int64_t first = stream;
    for (uint32_t i = 0; i < senders.GetN(); ++i)
    {
        auto app = ns3::CreateObject<BackgroundSender>();
        app->Setup(parameters, sinkAddress, kBackgroundPort);
        senders.Get(i)->AddApplication(app);
        stream += app->AssignStreams(stream);
    }
    ns3::PacketSinkHelper discard(
        "ns3::UdpSocketFactory",
        ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), kBackgroundPort));
    discard.Install(sink);
    NS_LOG_INFO(Describe(parameters) << " to " << sinkAddress);
    return stream - first;
}

} // namespace netloop
