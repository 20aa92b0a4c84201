/*
 * Trace files of a Wi-Fi run: each device's pcap holds exactly the UDP
 * packets sent on the loop's port from that device, the FlowMonitor XML
 * parses and its per-flow counts match the engine's sent/delivered counts,
 * and the NetAnim XML and ASCII trace are written.
 */
#include "net_test_util.h"
#include "traces.h"

#include <cstdio>
#include <cstring>
#include <expat.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

using namespace netloop;
using namespace netloop::test;

namespace
{

std::string
ReadAll(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Which frames CountUdpFrames counts.
enum class Count
{
    FirstTransmissions, //!< frames with the retry flag clear: what a device sent
    Datagrams,          //!< distinct IPv4 identifications: what a device received
};

/**
 * Counts the 802.11 data frames in a pcap (DLT_IEEE802_11) that carry an IPv4
 * UDP datagram from srcIp (host order) to dstPort.
 */
int
CountUdpFrames(const std::string& path,
               uint32_t srcIp,
               uint16_t dstPort,
               uint32_t* linkType,
               Count what = Count::FirstTransmissions)
{
    const std::string data = ReadAll(path);
    if (data.size() < 24)
    {
        return -1;
    }
    auto u32 = [&data](std::size_t at) {
        uint32_t v;
        std::memcpy(&v, data.data() + at, 4);
        return v; // the pcap files are written little-endian on this host
    };
    *linkType = u32(20);
    int count = 0;
    std::set<uint16_t> ids;
    std::size_t at = 24;
    while (at + 16 <= data.size())
    {
        const uint32_t length = u32(at + 8);
        const auto* frame = reinterpret_cast<const uint8_t*>(data.data() + at + 16);
        at += 16 + length;
        if (at > data.size())
        {
            break; // a truncated record
        }
        if (length < 24)
        {
            continue; // control frames (ACK, RTS, CTS)
        }
        const uint8_t type = (frame[0] >> 2) & 0x3;
        const uint8_t subtype = frame[0] >> 4;
        const bool retry = frame[1] & 0x08;
        if (type != 2 || (retry && what == Count::FirstTransmissions))
        {
            continue;
        }
        std::size_t header = 24 + ((subtype & 0x8) ? 2 : 0);
        const uint8_t* llc = frame + header;
        if (header + 8 + 28 > length || llc[6] != 0x08 || llc[7] != 0x00)
        {
            continue;
        }
        const uint8_t* ip = llc + 8;
        const std::size_t ihl = (ip[0] & 0x0f) * 4;
        const uint32_t src = (uint32_t(ip[12]) << 24) | (ip[13] << 16) | (ip[14] << 8) | ip[15];
        const uint16_t dport = (ip[ihl + 2] << 8) | ip[ihl + 3];
        if (ip[9] == 17 && src == srcIp && dport == dstPort)
        {
            ++count;
            ids.insert(uint16_t((ip[4] << 8) | ip[5]));
        }
    }
    return what == Count::FirstTransmissions ? count : int(ids.size());
}

/// A FlowMonitor flow: its 5-tuple and counters.
struct MonitoredFlow
{
    std::string source;
    std::string destination;
    int protocol = 0;
    int destinationPort = 0;
    uint64_t txPackets = 0;
    uint64_t rxPackets = 0;
    uint64_t lostPackets = 0;
};

/// What the expat handlers collect.
struct XmlState
{
    std::map<std::string, MonitoredFlow> flows; //!< by flowId
    std::vector<std::string> stack;             //!< open elements
    int elements = 0;
};

void
OnStart(void* user, const XML_Char* name, const XML_Char** attributes)
{
    auto* state = static_cast<XmlState*>(user);
    state->elements++;
    std::map<std::string, std::string> a;
    for (int i = 0; attributes[i]; i += 2)
    {
        a[attributes[i]] = attributes[i + 1];
    }
    const std::string element = name;
    const std::string parent = state->stack.empty() ? "" : state->stack.back();
    if (element == "Flow" && parent == "FlowStats")
    {
        MonitoredFlow& f = state->flows[a["flowId"]];
        f.txPackets = std::stoull(a["txPackets"]);
        f.rxPackets = std::stoull(a["rxPackets"]);
        f.lostPackets = std::stoull(a["lostPackets"]);
    }
    else if (element == "Flow" && parent == "Ipv4FlowClassifier")
    {
        MonitoredFlow& f = state->flows[a["flowId"]];
        f.source = a["sourceAddress"];
        f.destination = a["destinationAddress"];
        f.protocol = std::stoi(a["protocol"]);
        f.destinationPort = std::stoi(a["destinationPort"]);
    }
    state->stack.push_back(element);
}

void
OnEnd(void* user, const XML_Char*)
{
    static_cast<XmlState*>(user)->stack.pop_back();
}

/// Parses an XML file with expat; an empty optional and a failure if it is not well-formed.
std::optional<XmlState>
ParseXml(const std::string& path)
{
    const std::string text = ReadAll(path);
    XmlState state;
    XML_Parser parser = XML_ParserCreate(nullptr);
    XML_SetUserData(parser, &state);
    XML_SetElementHandler(parser, OnStart, OnEnd);
    const bool ok =
        XML_Parse(parser, text.data(), static_cast<int>(text.size()), 1) == XML_STATUS_OK;
    if (!ok)
    {
        ADD_FAILURE() << path << ": " << XML_ErrorString(XML_GetErrorCode(parser)) << " at line "
                      << XML_GetCurrentLineNumber(parser);
    }
    XML_ParserFree(parser);
    return ok ? std::optional<XmlState>(state) : std::nullopt;
}

} // namespace

TEST(Traces, PcapAndFlowMonitorAgreeWithWhatTheEngineCounted)
{
    char dir[] = "/tmp/netloop-traces-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string base = dir;
    TraceOptions options;
    options.pcap = base + "/run";
    options.ascii = base + "/run.tr";
    options.flowMonitor = base + "/flows.xml";
    options.netanim = base + "/anim.xml";
    options.dropLog = base + "/drops.csv";

    wire::Summary summary;
    {
        NetHarness h;
        auto traces = std::make_unique<TraceSession>(options);
        h.Build([&traces]() {
            // Node 2 stands out of range of node 0: flow 2 loses packets.
            BuiltNetwork built = BuildFromArgs(
                {"--network=wifi", "--nodes=3", "--positions=" + OnXAxis({0, 20, 300})});
            const auto problem = traces->Start();
            EXPECT_FALSE(problem) << *problem;
            return built;
        });
        h.Engine().SetDropLog(traces->GetDropLog());
        h.Configure({UdpFlow(0, 5000, 0, 1), UdpFlow(1, 5001, 1, 0), UdpFlow(2, 5002, 0, 2)});
        RunLog log = h.RunPeriodic({200, 60, 100}, 20 * kMs, 100 * kMs, 1 * kS);
        summary = log.summary;
        traces->Finish();
        traces.reset();
    }
    EXPECT_EQ(summary.flows[0].sent, 50u);
    EXPECT_EQ(summary.flows[2].delivered, 0u);

    // pcap: <prefix>-<node>-<device>.pcap, 802.11 frames as seen by each PHY.
    uint32_t linkType = 0;
    EXPECT_EQ(CountUdpFrames(options.pcap + "-0-0.pcap", 0x0a010001, 5000, &linkType),
              int(summary.flows[0].sent));
    EXPECT_EQ(linkType, 105u) << "DLT_IEEE802_11";
    EXPECT_EQ(CountUdpFrames(options.pcap + "-1-0.pcap", 0x0a010002, 5001, &linkType),
              int(summary.flows[1].sent));
    EXPECT_EQ(CountUdpFrames(options.pcap + "-0-0.pcap", 0x0a010001, 5002, &linkType),
              int(summary.flows[2].sent))
        << "a lost packet's first transmission is in the sender's pcap too";
    // Both nodes send at the same instants: collisions, retransmissions (retry flag set).
    EXPECT_EQ(
        CountUdpFrames(options.pcap + "-1-0.pcap", 0x0a010001, 5000, &linkType, Count::Datagrams),
        int(summary.flows[0].delivered))
        << "the receiver's pcap holds what it received";

    // FlowMonitor: one flow per 5-tuple, counts as the engine's.
    auto xml = ParseXml(options.flowMonitor);
    ASSERT_TRUE(xml);
    std::map<int, MonitoredFlow> byPort;
    for (const auto& [id, f] : xml->flows)
    {
        byPort[f.destinationPort] = f;
    }
    ASSERT_EQ(byPort.count(5000), 1u);
    ASSERT_EQ(byPort.count(5001), 1u);
    ASSERT_EQ(byPort.count(5002), 1u);
    for (uint32_t flow = 0; flow < 3; ++flow)
    {
        const MonitoredFlow& f = byPort[5000 + flow];
        EXPECT_EQ(f.protocol, 17);
        EXPECT_EQ(f.txPackets, summary.flows[flow].sent) << "flow " << flow;
        EXPECT_EQ(f.rxPackets, summary.flows[flow].delivered) << "flow " << flow;
    }
    EXPECT_EQ(byPort[5000].source, "10.1.0.1");
    EXPECT_EQ(byPort[5000].destination, "10.1.0.2");

    // NetAnim XML is well-formed; the ASCII trace and the drop log have content.
    auto anim = ParseXml(options.netanim);
    ASSERT_TRUE(anim);
    EXPECT_GT(anim->elements, 10);
    const std::string ascii = ReadAll(options.ascii);
    EXPECT_NE(ascii.find("ns3::UdpHeader"), std::string::npos);
    const std::string drops = ReadAll(options.dropLog);
    EXPECT_EQ(drops.rfind("time_ns,node,flow,port,number,state_index,state_count,sent_ns,reason,"
                          "reported,source,detail\n",
                          0),
              0u);
    EXPECT_NE(drops.find(",5002,"), std::string::npos);

    EXPECT_EQ(std::system(("rm -rf " + base).c_str()), 0);
}

TEST(Traces, AFileThatCannotBeWrittenIsABadArgument)
{
    TraceOptions options;
    options.flowMonitor = "/nonexistent-dir/flows.xml";
    auto problem = options.Validate();
    ASSERT_TRUE(problem);
    EXPECT_NE(problem->find("--flowMonitor=/nonexistent-dir/flows.xml"), std::string::npos);
    options = TraceOptions{};
    options.pcap = "/nonexistent-dir/run";
    problem = options.Validate();
    ASSERT_TRUE(problem);
    EXPECT_NE(problem->find("--pcap"), std::string::npos);
}
