#include "traces.h"

#include "ns3/animation-interface.h"
#include "ns3/csma-helper.h"
#include "ns3/csma-net-device.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/loopback-net-device.h"
#include "ns3/node-list.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/trace-helper.h"
#include "ns3/wave-helper.h"
#include "ns3/wave-net-device.h"
#include "ns3/wifi-net-device.h"
#include "ns3/yans-wifi-helper.h"

#include <cstdio>
#include <fstream>
#include <limits>
#include <unistd.h>

namespace netloop
{

NS_LOG_COMPONENT_DEFINE("NetloopTraces");

using ns3::Ptr;

namespace
{

/// Whether a file can be created (or appended to) at path; leaves no new file behind.
bool
CanWrite(const std::string& path)
{
    const bool existed = access(path.c_str(), F_OK) == 0;
    std::ofstream probe(path, std::ios::app);
    const bool ok = probe.is_open();
    probe.close();
    if (ok && !existed)
    {
        std::remove(path.c_str());
    }
    return ok;
}

/// The directory part of a path prefix ("." if none).
std::string
DirectoryOf(const std::string& prefix)
{
    const auto slash = prefix.rfind('/');
    if (slash == std::string::npos)
    {
        return ".";
    }
    return slash == 0 ? "/" : prefix.substr(0, slash);
}

/// The IPv4 interfaces of a device.
std::vector<std::pair<Ptr<ns3::Ipv4>, uint32_t>>
InterfacesOf(Ptr<ns3::NetDevice> device)
{
    std::vector<std::pair<Ptr<ns3::Ipv4>, uint32_t>> out;
    Ptr<ns3::Ipv4> ipv4 = device->GetNode()->GetObject<ns3::Ipv4>();
    if (!ipv4)
    {
        return out;
    }
    const int32_t interface = ipv4->GetInterfaceForDevice(device);
    if (interface >= 0)
    {
        out.emplace_back(ipv4, static_cast<uint32_t>(interface));
    }
    return out;
}

} // namespace

void
TraceOptions::DeclareArguments(ArgumentTable& table)
{
    table
        .Add("pcap",
             "pcap",
             "pcap trace of every device: file name prefix, files <prefix>-<node>-<device>.pcap "
             "(IP level, <prefix>-n<node>-i<interface>.pcap, for LTE devices)",
             pcap)
        .File("pcap");
    table.Add("ascii", "ascii", "ASCII trace of every device into one file", ascii)
        .File("trace.tr");
    table
        .Add("flowMonitor",
             "flow_monitor",
             "FlowMonitor statistics of every IPv4 flow, XML written at the end",
             flowMonitor)
        .File("flowmon.xml");
    table.Add("netanim", "netanim", "NetAnim animation XML", netanim).File("netanim.xml");
    table
        .Add("dropLog",
             "drop_log",
             "CSV log of every drop of a tagged control packet (PHY/MAC/queue/IP), with its "
             "tags, node, time, reason and ns-3 detail",
             dropLog)
        .File("drops.csv");
}

void
TraceOptions::AddArguments(CheckedCommandLine& cmd)
{
    ArgumentTable table;
    DeclareArguments(table);
    table.Register(cmd, "traces");
}

std::optional<std::string>
TraceOptions::Validate() const
{
    if (!pcap.empty() && access(DirectoryOf(pcap).c_str(), W_OK) != 0)
    {
        return "--pcap=" + pcap + ": the directory " + DirectoryOf(pcap) + " is not writable";
    }
    const std::pair<const char*, const std::string*> files[] = {{"ascii", &ascii},
                                                                {"flowMonitor", &flowMonitor},
                                                                {"netanim", &netanim},
                                                                {"dropLog", &dropLog}};
    for (const auto& [name, path] : files)
    {
        if (!path->empty() && !CanWrite(*path))
        {
            return std::string("--") + name + "=" + *path + ": cannot create the file";
        }
    }
    return std::nullopt;
}

TraceSession::TraceSession(TraceOptions options)
    : m_options(std::move(options))
{
}

TraceSession::~TraceSession()
{
    Finish();
}

std::optional<std::string>
TraceSession::Start()
{
    if (auto problem = m_options.Validate())
    {
        return problem;
    }
    if (!m_options.dropLog.empty())
    {
        m_dropLog = std::make_unique<DropLog>(m_options.dropLog);
        if (!m_dropLog->IsOpen())
        {
            return "--dropLog=" + m_options.dropLog + ": cannot create the file";
        }
    }
    if (!m_options.ascii.empty())
    {
        ns3::AsciiTraceHelper helper;
        m_ascii = helper.CreateFileStream(m_options.ascii);
    }
    for (uint32_t n = 0; n < ns3::NodeList::GetNNodes(); ++n)
    {
        Ptr<ns3::Node> node = ns3::NodeList::GetNode(n);
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            Ptr<ns3::NetDevice> device = node->GetDevice(d);
            if (ns3::DynamicCast<ns3::LoopbackNetDevice>(device))
            {
                continue;
            }
            if (!m_options.pcap.empty())
            {
                EnablePcap(device);
            }
            if (m_ascii)
            {
                EnableAscii(device);
            }
        }
    }
    if (!m_options.flowMonitor.empty())
    {
        m_flowHelper = std::make_unique<ns3::FlowMonitorHelper>();
        m_flowMonitor = m_flowHelper->InstallAll();
    }
    if (!m_options.netanim.empty())
    {
        m_anim = std::make_unique<ns3::AnimationInterface>(m_options.netanim);
        m_anim->SetMaxPktsPerTraceFile(std::numeric_limits<uint64_t>::max());
    }
    return std::nullopt;
}

void
TraceSession::EnablePcap(Ptr<ns3::NetDevice> device)
{
    const std::string& prefix = m_options.pcap;
    if (ns3::DynamicCast<ns3::WaveNetDevice>(device))
    {
        ns3::YansWavePhyHelper().EnablePcap(prefix, device);
    }
    else if (ns3::DynamicCast<ns3::WifiNetDevice>(device))
    {
        ns3::YansWifiPhyHelper().EnablePcap(prefix, device);
    }
    else if (ns3::DynamicCast<ns3::PointToPointNetDevice>(device))
    {
        ns3::PointToPointHelper().EnablePcap(prefix, device);
    }
    else if (ns3::DynamicCast<ns3::CsmaNetDevice>(device))
    {
        ns3::CsmaHelper().EnablePcap(prefix, device);
    }
    else
    {
        for (const auto& [ipv4, interface] : InterfacesOf(device))
        {
            ns3::InternetStackHelper().EnablePcapIpv4(prefix, ipv4, interface);
        }
    }
}

void
TraceSession::EnableAscii(Ptr<ns3::NetDevice> device)
{
    if (ns3::DynamicCast<ns3::WaveNetDevice>(device))
    {
        ns3::YansWavePhyHelper().EnableAscii(m_ascii, device);
    }
    else if (ns3::DynamicCast<ns3::WifiNetDevice>(device))
    {
        ns3::YansWifiPhyHelper().EnableAscii(m_ascii, device);
    }
    else if (ns3::DynamicCast<ns3::PointToPointNetDevice>(device))
    {
        ns3::PointToPointHelper().EnableAscii(m_ascii, device);
    }
    else if (ns3::DynamicCast<ns3::CsmaNetDevice>(device))
    {
        ns3::CsmaHelper().EnableAscii(m_ascii, device);
    }
    else
    {
        for (const auto& [ipv4, interface] : InterfacesOf(device))
        {
            ns3::InternetStackHelper().EnableAsciiIpv4(m_ascii, ipv4, interface);
        }
    }
}

DropLog*
TraceSession::GetDropLog()
{
    return m_dropLog.get();
}

ns3::Ptr<ns3::FlowMonitor>
TraceSession::GetFlowMonitor()
{
    return m_flowMonitor;
}

void
TraceSession::Finish()
{
    if (m_finished)
    {
        return;
    }
    m_finished = true;
    if (m_flowMonitor)
    {
        m_flowMonitor->CheckForLostPackets();
        const std::string partial = m_options.flowMonitor + ".partial";
        m_flowMonitor->SerializeToXmlFile(partial, true, true);
        if (std::rename(partial.c_str(), m_options.flowMonitor.c_str()) != 0)
        {
            NS_LOG_WARN("cannot rename " << partial << " to " << m_options.flowMonitor);
        }
    }
    m_anim.reset(); // writes the closing element
    if (m_dropLog)
    {
        m_dropLog->Flush();
    }
    if (m_ascii)
    {
        m_ascii->GetStream()->flush();
    }
}

} // namespace netloop
