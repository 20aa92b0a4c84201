/*
 * Argument parsing of the network kinds without running anything: positions
 * and topology files (errors name the line), the default layouts, the option
 * checks of each builder, standalone flows, and the TCP message framer.
 */
#include "message-framer.h"
#include "net_test_util.h"
#include "placement.h"
#include "standalone.h"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

using namespace netloop;
using namespace netloop::test;

namespace
{

/// A temporary file with the given content, removed at the end of the test.
class TempFile
{
  public:
    explicit TempFile(const std::string& content)
    {
        char name[] = "/tmp/netloop-topology-XXXXXX";
        const int fd = mkstemp(name);
        close(fd);
        m_path = name;
        std::ofstream(m_path) << content;
    }

    ~TempFile()
    {
        std::remove(m_path.c_str());
    }

    const std::string& Path() const
    {
        return m_path;
    }

  private:
    std::string m_path;
};

std::vector<ns3::Vector>
Positions(const std::variant<std::vector<ns3::Vector>, std::string>& v)
{
    if (auto* e = std::get_if<std::string>(&v))
    {
        ADD_FAILURE() << *e;
        return {};
    }
    return std::get<std::vector<ns3::Vector>>(v);
}

std::string
Error(const std::variant<std::vector<ns3::Vector>, std::string>& v)
{
    if (auto* e = std::get_if<std::string>(&v))
    {
        return *e;
    }
    ADD_FAILURE() << "accepted";
    return "";
}

} // namespace

TEST(Placement, APositionListIsParsedInOrder)
{
    auto p = Positions(ParsePositionList(" 0,0,0 ; 10.5, -2, 1e1;"));
    ASSERT_EQ(p.size(), 2u);
    EXPECT_DOUBLE_EQ(p[1].x, 10.5);
    EXPECT_DOUBLE_EQ(p[1].y, -2.0);
    EXPECT_DOUBLE_EQ(p[1].z, 10.0);
    EXPECT_TRUE(Positions(ParsePositionList("")).empty());
}

TEST(Placement, ABadPositionListNamesTheEntry)
{
    EXPECT_NE(Error(ParsePositionList("0,0,0;1,2")).find("position 1"), std::string::npos);
    EXPECT_NE(Error(ParsePositionList("0,0,0;1,2")).find("found 2"), std::string::npos);
    EXPECT_NE(Error(ParsePositionList("x,0,0")).find("\"x\" is not a finite number"),
              std::string::npos);
    EXPECT_NE(Error(ParsePositionList("0,0,0;;1,1,1")).find("position 1 is empty"),
              std::string::npos);
    EXPECT_NE(Error(ParsePositionList("inf,0,0")).find("not a finite number"), std::string::npos);
}

TEST(Placement, ATopologyFileHasACountThenOnePositionPerLine)
{
    TempFile f("# a platoon\n\n3   # vehicles\n0 0 0\n  10.5,0,1  # commas work too\n20\t0\t0\n");
    auto p = Positions(ReadTopologyFile(f.Path()));
    ASSERT_EQ(p.size(), 3u);
    EXPECT_DOUBLE_EQ(p[1].x, 10.5);
    EXPECT_DOUBLE_EQ(p[1].z, 1.0);
    EXPECT_DOUBLE_EQ(p[2].x, 20.0);
}

TEST(Placement, TopologyFileErrorsNameTheFileAndTheLine)
{
    struct Case
    {
        std::string content;
        std::string needle;
    };

    const std::vector<Case> cases = {
        {"# nothing\n", "no node count"},
        {"three\n0 0 0\n", ":1: the first line must be the node count"},
        {"\n# header\n2\n0 0 0\n1 1\n", ":5: expected three coordinates"},
        {"2\n0 0 0\n1 a 1\n", ":3: \"a\" is not a finite number"},
        {"2\n0 0 0\n", "declares 2 nodes but gives 1 positions"},
        {"1\n0 0 0\n1 1 1\n", ":3: more positions than the 1 nodes"},
        {"0\n", ":1: the node count is 0"},
    };
    for (const Case& c : cases)
    {
        TempFile f(c.content);
        const std::string e = Error(ReadTopologyFile(f.Path()));
        EXPECT_NE(e.find(f.Path()), std::string::npos) << e;
        EXPECT_NE(e.find(c.needle), std::string::npos) << c.content << " -> " << e;
    }
    EXPECT_NE(Error(ReadTopologyFile("/nonexistent/topology.txt")).find("cannot open"),
              std::string::npos);
}

TEST(Placement, AnEndlessOrHugeTopologyFileIsAnErrorAndLongLinesAreQuotedShort)
{
    const std::string zero = Error(ReadTopologyFile("/dev/zero"));
    EXPECT_NE(zero.find("/dev/zero: larger than 16 MiB"), std::string::npos) << zero;

    const std::string longLine(100000, 'x');
    TempFile f(longLine + "\n");
    const std::string e = Error(ReadTopologyFile(f.Path()));
    EXPECT_NE(e.find(":1: the first line must be the node count"), std::string::npos) << e;
    EXPECT_LT(e.size(), 300u) << e.substr(0, 300);
    EXPECT_NE(e.find(std::string(80, 'x') + "...\""), std::string::npos) << e.substr(0, 300);
}

TEST(Placement, DefaultLayoutsAreALineAndARingAroundTheCentroid)
{
    PlacementOptions o;
    o.spacing = 5.0;
    o.bgRadius = 20.0;
    auto p = Positions(ResolvePositions(o, 3, 4, "nodes"));
    ASSERT_EQ(p.size(), 7u);
    EXPECT_DOUBLE_EQ(p[2].x, 10.0);
    // The ring is centred on (5, 0, 0), radius 20, first at angle 0, then every 90 degrees.
    EXPECT_DOUBLE_EQ(p[3].x, 25.0);
    EXPECT_NEAR(p[4].x, 5.0, 1e-9);
    EXPECT_NEAR(p[4].y, 20.0, 1e-9);
    EXPECT_NEAR(p[5].x, -15.0, 1e-9);
    for (std::size_t k = 3; k < 7; ++k)
    {
        EXPECT_NEAR(std::hypot(p[k].x - 5.0, p[k].y), 20.0, 1e-9);
    }
    // Explicit positions for the placed nodes only (ring for the rest) or for all.
    o.positions = "0,0,0;1,0,0;2,0,0";
    EXPECT_EQ(Positions(ResolvePositions(o, 3, 2, "nodes")).size(), 5u);
    o.positions = "0,0,0;1,0,0;2,0,0;3,3,3;4,4,4";
    auto all = Positions(ResolvePositions(o, 3, 2, "nodes"));
    ASSERT_EQ(all.size(), 5u);
    EXPECT_DOUBLE_EQ(all[4].y, 4.0);
    o.positions = "0,0,0;1,0,0";
    const std::string e = Error(ResolvePositions(o, 3, 2, "UEs"));
    EXPECT_NE(e.find("--positions gives 2 positions; expected 3 (the UEs) or 5"), std::string::npos)
        << e;
    TempFile f("1\n0 0 0\n");
    o.topologyFile = f.Path();
    EXPECT_NE(Error(ResolvePositions(o, 1, 0, "nodes")).find("use one"), std::string::npos);
}

TEST(BuilderOptions, EachKindRejectsWhatDoesNotFitItAndNamesTheArgument)
{
    TempFile bad("2\n0 0 0\n1 1\n");
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--network=p2p", "--bgNodes=2"}, "--bgNodes=2"},
        {{"--network=p2p", "--topologyFile=" + bad.Path()}, ":3: expected three coordinates"},
        {{"--network=wifi", "--wifiStandard=80211x"}, "--wifiStandard=80211x"},
        {{"--network=wifi", "--phyMode=OfdmRate6MbpsBW10MHz"}, "--phyMode=OfdmRate6MbpsBW10MHz"},
        {{"--network=wifi", "--wifiStandard=80211n", "--rateManager=minstrel"},
         "--rateManager=minstrel"},
        {{"--network=wifi", "--wifiStandard=80211b", "--wifiBand=5GHz"}, "--wifiBand=5GHz"},
        {{"--network=wifi", "--channelWidth=40"}, "--channelWidth=40"},
        {{"--network=wifi", "--propagation=okumura"}, "--propagation=okumura"},
        {{"--network=wifi", "--nakagamiM0=0.1"}, "--nakagamiM0"},
        {{"--network=wifi", "--referenceLoss=loud"}, "--referenceLoss=loud"},
        {{"--network=wifi", "--bgTraffic=bursty"}, "--bgTraffic=bursty"},
        {{"--network=wifi", "--bgRate=fast"}, "--bgRate=fast"},
        {{"--network=wifi", "--bgNodes=1", "--bgOn=2"}, "--bgOn=2"},
        {{"--network=wifi", "--nodes=3", "--positions=0,0,0;1,0,0"}, "expected 3"},
        {{"--network=wave", "--phyMode=OfdmRate6Mbps"}, "not an 802.11p mode"},
        {{"--network=wave", "--waveMac=dsrc"}, "--waveMac=dsrc"},
        {{"--network=wave", "--waveChannelAccess=alternating"}, "needs --waveMac=wave"},
        {{"--network=wave", "--bsmNodes=0,7"}, "node 7 does not exist"},
        {{"--network=wave", "--bsmNodes=0,x"}, "\"x\" is not a node index"},
        {{"--network=wave", "--bsmRate=0"}, "--bsmRate=0"},
        {{"--network=wave", "--bsmTxMaxDelay=200ms"}, "shorter than the BSM interval"},
        {{"--network=lte", "--ues=3", "--nodes=2"}, "use --nodes=4"},
        {{"--network=lte", "--nodes=1"}, "at least one UE and the remote host"},
        {{"--network=lte", "--bandwidth=30"}, "--bandwidth=30"},
        {{"--network=lte", "--scheduler=fifo"}, "--scheduler=fifo"},
        {{"--network=lte", "--propagation=nakagami"}, "--propagation=nakagami"},
        {{"--network=lte", "--enbs=2", "--enbPositions=0,0,0"}, "for --enbs=2"},
        {{"--network=lte", "--s1uLinkDelay=2"}, "--s1uLinkDelay=2"},
        {{"--network=lte", "--remoteHostDataRate=0bps"}, "--remoteHostDataRate=0bps"},
    };
    for (const auto& [args, needle] : cases)
    {
        const std::string e = RejectionOf(args);
        EXPECT_NE(e.find(needle), std::string::npos) << args.back() << " -> \"" << e << "\"";
    }
    // And valid combinations pass.
    EXPECT_EQ(RejectionOf({"--network=wifi",
                           "--wifiStandard=80211n",
                           "--wifiBand=2.4GHz",
                           "--channelWidth=40",
                           "--rateManager=minstrelHt"}),
              "");
    EXPECT_EQ(RejectionOf({"--network=wave",
                           "--waveMac=wave",
                           "--waveChannelAccess=alternating",
                           "--bsmNodes=all",
                           "--bgNodes=2"}),
              "");
    EXPECT_EQ(RejectionOf({"--network=lte", "--ues=3"}), "");
}

TEST(StandaloneFlows, AreParsedWithOptionalStartAndTransport)
{
    auto parsed = ParseStandaloneFlows("0>1:5000:100:10ms; 1>0:5001:20:2.5ms:1ms:tcp");
    ASSERT_TRUE(std::holds_alternative<std::vector<StandaloneFlow>>(parsed))
        << std::get<std::string>(parsed);
    const auto& flows = std::get<std::vector<StandaloneFlow>>(parsed);
    ASSERT_EQ(flows.size(), 2u);
    EXPECT_EQ(flows[0].port, 5000);
    EXPECT_EQ(flows[0].periodNs, 10 * kMs);
    EXPECT_EQ(flows[0].startNs, 0u);
    EXPECT_EQ(flows[1].src, 1u);
    EXPECT_EQ(flows[1].size, 20u);
    EXPECT_EQ(flows[1].periodNs, 2500000u);
    EXPECT_EQ(flows[1].startNs, kMs);
    EXPECT_EQ(flows[1].transport, wire::Transport::Tcp);
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"", "is empty"},
        {"0-1:5000:100:10ms", "is not src>dst"},
        {"0>1:0:100:10ms", "port \"0\""},
        {"0>1:5000:100:0", "must be longer than 0"},
        {"0>1:5000:100:10", "missing unit"},
        {"0>1:5000:100:10ms:0:sctp", "\"sctp\" is not udp or tcp"},
        {"0>1:5000:100:10ms;;1>0:1:1:1ms", "flow 1 is empty"},
    };
    for (const auto& [text, needle] : bad)
    {
        auto r = ParseStandaloneFlows(text);
        ASSERT_TRUE(std::holds_alternative<std::string>(r)) << text;
        EXPECT_NE(std::get<std::string>(r).find(needle), std::string::npos)
            << text << " -> " << std::get<std::string>(r);
    }
}

TEST(MessageFramer, CompletesEachMessageWithItsLastByteInSendOrder)
{
    MessageFramer framer;
    auto message = [](uint64_t number, uint32_t size) {
        ControlPacket p;
        p.number = number;
        p.size = size;
        return p;
    };
    framer.Push(message(0, 3));
    framer.Push(message(1, 1));
    framer.Push(message(2, 5));
    EXPECT_TRUE(framer.Consume(2).empty());
    EXPECT_EQ(framer.GetHeadBytes(), 2u);
    auto done = framer.Consume(2); // completes 0 (3 bytes) and 1 (1 byte)
    ASSERT_EQ(done.size(), 2u);
    EXPECT_EQ(done[0].number, 0u);
    EXPECT_EQ(done[1].number, 1u);
    EXPECT_TRUE(framer.Consume(4).empty());
    done = framer.Consume(3); // 1 byte completes 2, 2 bytes too many
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].number, 2u);
    EXPECT_EQ(framer.GetExcessBytes(), 2u);
    framer.Push(message(3, 10));
    framer.Consume(4);
    auto pending = framer.TakePending();
    ASSERT_EQ(pending.size(), 1u);
    EXPECT_EQ(pending[0].number, 3u);
    EXPECT_EQ(framer.GetPendingCount(), 0u);
    EXPECT_EQ(framer.GetHeadBytes(), 0u);
}
