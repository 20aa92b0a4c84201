/*
 * Wi-Fi and WAVE networks on the real ns-3 models, through the stepping
 * engine: range, plant-driven mobility, contention, where and how lost packets
 * are reported, the WAVE helper's channel access, BSM traffic, seeds, cheap
 * kinematics and TCP flows.
 */
#include "drop-log.h"
#include "net_test_util.h"

#include "ns3/config.h"
#include "ns3/mobility-model.h"
#include "ns3/node-list.h"
#include "ns3/nstime.h"
#include "ns3/uinteger.h"
#include "ns3/wave-bsm-helper.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

using namespace netloop;
using namespace netloop::test;
using wire::DropReason;

namespace
{

/// Delivered / sent of flow 0 when node 1 stands still at distance d from node 0.
double
StaticRatio(NetHarness& h, const std::vector<std::string>& args, double d, uint64_t stop)
{
    std::vector<std::string> all = args;
    all.push_back("--positions=" + OnXAxis({0.0, d}));
    h.Build([&all]() { return BuildFromArgs(all); });
    h.Configure({UdpFlow(0, 5000, 0, 1)});
    RunLog log = h.RunPeriodic({100}, 10 * kMs, 100 * kMs, stop);
    const auto& c = log.summary.flows.at(0);
    return c.sent ? double(c.delivered) / double(c.sent) : 0.0;
}

/// Every packet is delivered at most once, dropped at most once, never both.
void
ExpectEachFateOnce(const RunLog& log)
{
    std::set<std::pair<uint32_t, uint64_t>> delivered;
    std::set<std::pair<uint32_t, uint64_t>> dropped;
    for (const auto& d : log.deliveries)
    {
        EXPECT_TRUE(delivered.insert({d.flow, d.number}).second)
            << "flow " << d.flow << " packet " << d.number << " delivered twice";
    }
    for (const auto& d : log.drops)
    {
        EXPECT_TRUE(dropped.insert({d.flow, d.number}).second)
            << "flow " << d.flow << " packet " << d.number << " dropped twice";
        EXPECT_EQ(delivered.count({d.flow, d.number}), 0u)
            << "flow " << d.flow << " packet " << d.number << " both delivered and dropped";
    }
    for (const auto& c : log.summary.flows)
    {
        EXPECT_GE(c.sent, c.delivered + c.dropped);
    }
}

/// The rows of a drop log: column name -> value.
std::vector<std::map<std::string, std::string>>
ReadCsv(const std::string& path)
{
    std::ifstream in(path);
    std::string line;
    std::vector<std::string> header;
    std::vector<std::map<std::string, std::string>> rows;
    auto split = [](const std::string& l) {
        std::vector<std::string> out;
        std::string cur;
        bool quoted = false;
        for (char c : l)
        {
            if (c == '"')
            {
                quoted = !quoted;
            }
            else if (c == ',' && !quoted)
            {
                out.push_back(cur);
                cur.clear();
            }
            else
            {
                cur += c;
            }
        }
        out.push_back(cur);
        return out;
    };
    if (std::getline(in, line))
    {
        header = split(line);
    }
    while (std::getline(in, line))
    {
        auto fields = split(line);
        std::map<std::string, std::string> row;
        for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i)
        {
            row[header[i]] = fields[i];
        }
        rows.push_back(row);
    }
    return rows;
}

std::string
TempPath(const std::string& name)
{
    return "/tmp/netloop-test-" + std::to_string(getpid()) + "-" + name;
}

} // namespace

TEST(WaveRange, UplinkDeliveryRatioFallsMonotonicallyWithDistance)
{
    // 802.11p OCB, 6 Mbps, 16 dBm, log-distance loss with Nakagami fading.
    NetHarness h;
    const std::vector<double> distances = {10, 45, 55, 65, 150};
    std::vector<double> ratios;
    for (double d : distances)
    {
        ratios.push_back(StaticRatio(h, {"--network=wave", "--propagation=nakagami"}, d, 2 * kS));
    }
    std::ostringstream all;
    for (std::size_t i = 0; i < distances.size(); ++i)
    {
        all << distances[i] << " m: " << ratios[i] << "  ";
    }
    SCOPED_TRACE(all.str());
    EXPECT_GE(ratios.front(), 0.99);
    EXPECT_LE(ratios.back(), 0.01);
    for (std::size_t i = 1; i < ratios.size(); ++i)
    {
        EXPECT_LE(ratios[i], ratios[i - 1]);
    }
    // A gradual decline through the range, not a single step.
    EXPECT_EQ(
        std::count_if(ratios.begin(), ratios.end(), [](double r) { return r > 0.1 && r < 0.9; }),
        2);
}

TEST(WaveMobility, NodesDrivenApartStopExchangingAtTheStaticRangeWithinOneSyncOfTravel)
{
    NetHarness h;
    const std::vector<std::string> args = {"--network=wave"}; // deterministic log-distance
    // Static range: the largest distance with a delivery ratio of at least 1/2, to 5 cm.
    double in = 10.0;
    double out = 200.0;
    ASSERT_GE(StaticRatio(h, args, in, kS / 2), 0.5);
    ASSERT_LT(StaticRatio(h, args, out, kS / 2), 0.5);
    while (out - in > 0.05)
    {
        const double mid = (in + out) / 2;
        (StaticRatio(h, args, mid, kS / 2) >= 0.5 ? in : out) = mid;
    }
    const double range = in;

    // Node 1 starts 20 m away and drives off at 5 m/s; the "plant" sends the kinematics
    // of both nodes at every 100 ms sync, as the bridge does.
    const double v = 5.0;
    const uint64_t sync = 100 * kMs;
    std::vector<std::string> moving = args;
    moving.push_back("--positions=" + OnXAxis({0.0, 20.0}));
    h.Build([&moving]() { return BuildFromArgs(moving); });
    h.Configure({UdpFlow(0, 5000, 0, 1)});
    const uint64_t stop = uint64_t((range - 20.0 + 10.0) / v * 1e9);
    RunLog log = h.RunPeriodic({100}, 10 * kMs, sync, stop, 0, [v](wire::Step& step) {
        const double t = double(ns3::Simulator::Now().GetNanoSeconds()) * 1e-9;
        step.kinematics.push_back(wire::NodeKinematics{0, {0, 0, 0}, {0, 0, 0}});
        step.kinematics.push_back(wire::NodeKinematics{1, {20.0 + v * t, 0, 0}, {v, 0, 0}});
    });
    ASSERT_FALSE(log.deliveries.empty());
    uint64_t lastSent = 0;
    for (const auto& d : log.deliveries)
    {
        lastSent = std::max(lastSent, d.sent);
    }
    const double stoppedAt = 20.0 + v * double(lastSent) * 1e-9;
    EXPECT_NEAR(stoppedAt, range, v * double(sync) * 1e-9)
        << "static range " << range << " m, last packet through at " << stoppedAt << " m";
    // Beyond, the MAC gives up on each packet after its retries (Mac, at the sender); as
    // that takes longer than the 10 ms between packets, the MAC queue backs up and packets
    // also expire there (Queue, at the sender).
    ASSERT_FALSE(log.drops.empty());
    EXPECT_EQ(log.drops.front().reason, DropReason::Mac);
    for (const auto& d : log.drops)
    {
        EXPECT_GT(d.sent, lastSent);
        EXPECT_TRUE(d.reason == DropReason::Mac || d.reason == DropReason::Queue)
            << wire::ToString(d.reason);
        EXPECT_EQ(d.node, 0u);
    }
    ExpectEachFateOnce(log);
    // Node 0 never moved: its kinematics were never applied after the first sync.
    EXPECT_LE(h.Engine().GetKinematicsApplied(), stop / sync + 2);
}

TEST(Contention, BackgroundNodesRaiseTheLoopsMeanDelay)
{
    NetHarness h;
    std::vector<double> delays;
    for (uint32_t bg : {0u, 4u, 8u})
    {
        h.Build([bg]() {
            return BuildFromArgs({"--network=wave",
                                  "--positions=" + OnXAxis({0, 10}),
                                  "--bgNodes=" + std::to_string(bg),
                                  "--bgRate=300kbps",
                                  "--bgPacketSize=1000"});
        });
        h.Configure({UdpFlow(0, 5000, 0, 1), UdpFlow(1, 5001, 1, 0)});
        RunLog log = h.RunPeriodic({100, 100}, 10 * kMs, 100 * kMs, 3 * kS);
        EXPECT_EQ(log.summary.flows[0].delivered, 300u);
        delays.push_back((log.MeanDelay(0) + log.MeanDelay(1)) / 2);
    }
    EXPECT_LT(delays[0], delays[1]) << delays[0] << " " << delays[1];
    EXPECT_LT(delays[1], delays[2]) << delays[1] << " " << delays[2];
}

TEST(WifiDrops, ALostUnicastPacketIsReportedOnceAsMacAtTheSenderAndPhyEventsOnlyInTheLog)
{
    // Node 1 is out of range of node 0; node 2, farther still on the other side, overhears.
    const std::string logPath = TempPath("drops.csv");
    {
        DropLog dropLog(logPath);
        NetHarness h;
        h.Build(
            []() {
                return BuildFromArgs(
                    {"--network=wifi", "--nodes=3", "--positions=" + OnXAxis({0, 200, -150})});
            },
            1,
            1,
            &dropLog);
        h.Configure({UdpFlow(0, 5000, 0, 1)});
        RunLog log = h.RunPeriodic({100}, 50 * kMs, 100 * kMs, 2 * kS);
        EXPECT_TRUE(log.deliveries.empty());
        ASSERT_EQ(log.drops.size(), 40u);
        for (const auto& d : log.drops)
        {
            EXPECT_EQ(d.reason, DropReason::Mac);
            EXPECT_EQ(d.node, 0u);
            EXPECT_GT(d.time, d.sent);
        }
        ExpectEachFateOnce(log);
    }
    const auto rows = ReadCsv(logPath);
    std::remove(logPath.c_str());
    std::set<std::string> reported;
    std::set<std::string> phyNodes;
    for (const auto& row : rows)
    {
        EXPECT_EQ(row.at("flow"), "0");
        EXPECT_EQ(row.at("port"), "5000");
        if (row.at("reported") == "1")
        {
            EXPECT_TRUE(reported.insert(row.at("number")).second);
            EXPECT_EQ(row.at("reason"), "Mac");
            EXPECT_EQ(row.at("source"), "WifiMac::DroppedMpdu");
            EXPECT_EQ(row.at("detail"), "WIFI_MAC_DROP_REACHED_RETRY_LIMIT");
            EXPECT_EQ(row.at("node"), "0");
        }
        else
        {
            EXPECT_EQ(row.at("reason"), "Phy");
            EXPECT_EQ(row.at("detail"), "PREAMBLE_DETECT_FAILURE");
            phyNodes.insert(row.at("node"));
        }
    }
    EXPECT_EQ(reported.size(), 40u);
    EXPECT_EQ(phyNodes, (std::set<std::string>{"1", "2"}))
        << "the destination and the third node log failed receptions";
}

TEST(WifiDrops, AFailedAttemptThatARetrySavesIsNotALoss)
{
    const std::string logPath = TempPath("retries.csv");
    RunLog log;
    {
        DropLog dropLog(logPath);
        NetHarness h;
        h.Build(
            []() {
                return BuildFromArgs({"--network=wifi",
                                      "--propagation=nakagami",
                                      "--positions=" + OnXAxis({0, 55})});
            },
            1,
            1,
            &dropLog);
        h.Configure({UdpFlow(0, 5000, 0, 1)});
        log = h.RunPeriodic({100}, 10 * kMs, 100 * kMs, 2 * kS);
        ExpectEachFateOnce(log);
    }
    std::set<uint64_t> delivered;
    for (const auto& d : log.deliveries)
    {
        delivered.insert(d.number);
    }
    std::set<uint64_t> failedAtDestinationThenDelivered;
    for (const auto& row : ReadCsv(logPath))
    {
        const uint64_t number = std::stoull(row.at("number"));
        if (row.at("node") == "1" && row.at("reported") == "0" && delivered.count(number))
        {
            failedAtDestinationThenDelivered.insert(number);
        }
    }
    std::remove(logPath.c_str());
    EXPECT_GT(failedAtDestinationThenDelivered.size(), 5u)
        << "fading makes some first attempts fail at the destination";
    for (const auto& d : log.drops)
    {
        EXPECT_EQ(d.reason, DropReason::Mac);
    }
}

TEST(WifiDrops, WithDynamicArpAnUnreachableNeighbourIsARoutingDropAtTheSender)
{
    NetHarness h;
    h.Build([]() {
        return BuildFromArgs(
            {"--network=wifi", "--staticArp=false", "--positions=" + OnXAxis({0, 500})});
    });
    h.Configure({UdpFlow(0, 5000, 0, 1)});
    RunLog log = h.RunPeriodic({100}, 100 * kMs, 100 * kMs, 5 * kS);
    EXPECT_TRUE(log.deliveries.empty());
    EXPECT_GE(log.drops.size(), 40u);
    for (const auto& d : log.drops)
    {
        EXPECT_EQ(d.reason, DropReason::Routing);
        EXPECT_EQ(d.node, 0u);
    }
    ExpectEachFateOnce(log);
}

TEST(WifiDrops, ABurstBeyondWhatTheChannelCarriesIsQueueDropsAtTheSender)
{
    NetHarness h;
    h.Build([]() { return BuildFromArgs({"--network=wifi", "--positions=" + OnXAxis({0, 10})}); });
    h.Configure({UdpFlow(0, 5000, 0, 1)});
    RunLog log = h.RunPeriodic({1400}, 1 * kMs, 100 * kMs, 2 * kS);
    ASSERT_FALSE(log.drops.empty());
    for (const auto& d : log.drops)
    {
        EXPECT_EQ(d.reason, DropReason::Queue);
        EXPECT_EQ(d.node, 0u);
    }
    EXPECT_GT(log.deliveries.size(), 500u);
    ExpectEachFateOnce(log);
}

TEST(Wave, TheWaveHelperCarriesIpOnSch1WithContinuousOrAlternatingAccess)
{
    NetHarness h;
    std::vector<double> delays;
    for (const std::string access : {"continuous", "alternating"})
    {
        h.Build([&access]() {
            return BuildFromArgs({"--network=wave",
                                  "--waveMac=wave",
                                  "--waveChannelAccess=" + access,
                                  "--positions=" + OnXAxis({0, 10})});
        });
        h.Configure({UdpFlow(0, 5000, 0, 1), UdpFlow(1, 5001, 1, 0)});
        // Sends at odd times, so that half of them fall into CCH intervals.
        RunLog log = h.RunPeriodic({100, 100}, 7 * kMs, 100 * kMs, 2 * kS);
        EXPECT_GE(log.summary.flows[0].delivered, log.summary.flows[0].sent - 8) << access;
        EXPECT_TRUE(log.drops.empty()) << access;
        delays.push_back(log.MeanDelay(0));
    }
    EXPECT_LT(delays[0], 3 * kMs);
    EXPECT_GT(delays[1], delays[0] + 10 * kMs)
        << "with alternating access a packet sent in a CCH interval waits for SCH1";
}

TEST(Wave, BsmBroadcastsFromTheWaveBsmHelperLoadTheChannel)
{
    NetHarness h;
    std::vector<double> delays;
    for (const std::string bsm : {"none", "all"})
    {
        h.Build([&bsm]() {
            return BuildFromArgs({"--network=wave",
                                  "--nodes=6",
                                  "--positions=" + OnXAxis({0, 5, 10, 15, 20, 25}),
                                  "--bsmNodes=" + bsm,
                                  "--bsmRate=50",
                                  "--bsmSize=1000"});
        });
        h.Configure({UdpFlow(0, 5000, 0, 1)});
        // BSMs start at 1 s (ns-3's BsmApplication): measure from 1 s on.
        RunLog log = h.RunPeriodic({100}, 10 * kMs, 100 * kMs, 3 * kS, 1 * kS);
        EXPECT_GE(log.summary.flows[0].delivered, 195u) << bsm;
        delays.push_back(log.MeanDelay(0));
    }
    EXPECT_GT(delays[1], delays[0] * 1.2) << delays[0] << " vs " << delays[1];
}

TEST(Seeds, TheSameSeedAndRunRepeatARunAndAnotherRunChangesIt)
{
    NetHarness h;
    auto once = [&h](uint64_t run) {
        h.Build(
            []() {
                return BuildFromArgs({"--network=wifi",
                                      "--propagation=nakagami",
                                      "--positions=" + OnXAxis({0, 55}),
                                      "--bgNodes=3",
                                      "--bgTraffic=poisson",
                                      "--bgRate=200kbps"});
            },
            7,
            run);
        h.Configure({UdpFlow(0, 5000, 0, 1), UdpFlow(1, 5001, 1, 0)});
        return h.RunPeriodic({100, 60}, 10 * kMs, 100 * kMs, 2 * kS);
    };
    auto key = [](const RunLog& log) {
        std::vector<std::tuple<uint32_t, uint64_t, uint64_t>> k;
        for (const auto& d : log.deliveries)
        {
            k.emplace_back(d.flow, d.number, d.received);
        }
        for (const auto& d : log.drops)
        {
            k.emplace_back(100 + d.flow, d.number, d.time);
        }
        return k;
    };
    const auto a = key(once(1));
    const auto b = key(once(1));
    const auto c = key(once(2));
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    EXPECT_GT(a.size(), 300u);
}

TEST(Kinematics, OnlyChangedKinematicsAreApplied)
{
    NetHarness h;
    StepEngine& engine = h.Build([]() {
        return BuildFromArgs({"--network=wifi", "--positions=" + OnXAxis({0, 10})});
    });
    h.Configure({});
    auto at = [](uint32_t node, double x, double v) {
        return wire::NodeKinematics{node, {x, 0, 0}, {v, 0, 0}};
    };
    wire::Step step;
    step.until = 100 * kMs;
    step.kinematics = {at(0, 0, 0), at(1, 10, 0)}; // where they are
    h.Step(step);
    EXPECT_EQ(engine.GetKinematicsApplied(), 0u);
    step.until = 200 * kMs;
    step.kinematics = {at(0, 0, 0), at(1, 12, 2)}; // node 1 jumps and starts moving
    h.Step(step);
    EXPECT_EQ(engine.GetKinematicsApplied(), 1u);
    step.until = 300 * kMs;
    step.kinematics = {at(0, 0, 0), at(1, 12.2, 2)}; // where its model has carried it
    h.Step(step);
    EXPECT_EQ(engine.GetKinematicsApplied(), 1u);
    step.until = 400 * kMs;
    step.kinematics = {at(0, 0, 0), at(1, 12.2, 2)}; // the same values again: back 0.2 m
    h.Step(step);
    EXPECT_EQ(engine.GetKinematicsApplied(), 2u);
    // Set back to 12.2 m at 300 ms, moved on for 100 ms at 2 m/s.
    auto model = h.Built().nodes.Get(1)->GetObject<ns3::MobilityModel>();
    EXPECT_NEAR(model->GetPosition().x, 12.4, 1e-9);
}

TEST(Tcp, FramedMessagesArriveWholeOnceAndInOrderThroughLossyLinks)
{
    NetHarness h;
    // p2p with 2% loss per packet: TCP retransmits, head-of-line blocking shows as delay.
    h.Build([]() {
        return BuildFromArgs(
            {"--network=p2p", "--dataRate=2Mbps", "--delay=5ms", "--lossRate=0.02"});
    });
    h.Configure({TcpFlow(0, 7000, 0, 1), UdpFlow(1, 7001, 0, 1)});
    std::vector<uint32_t> sizes;
    wire::Step step;
    step.until = 20 * kS;
    for (uint64_t i = 0; i < 200; ++i)
    {
        const uint32_t size = i == 50 ? 300000 : 1 + uint32_t((i * 7919) % 2000);
        sizes.push_back(size);
        step.sends.push_back(wire::SendRequest{0, i, 0, 1, 10 * kMs * i, size});
        step.sends.push_back(wire::SendRequest{1, i, 0, 1, 10 * kMs * i, 100});
    }
    RunLog log;
    h.Step(step, &log);
    const auto tcp = log.Of(0);
    ASSERT_EQ(tcp.size(), sizes.size());
    for (std::size_t i = 0; i < tcp.size(); ++i)
    {
        EXPECT_EQ(tcp[i].number, i);
        EXPECT_EQ(tcp[i].size, sizes[i]);
        EXPECT_EQ(tcp[i].sent, 10 * kMs * i);
        EXPECT_GE(tcp[i].received, tcp[i].sent + 5 * kMs);
        if (i > 0)
        {
            EXPECT_GE(tcp[i].received, tcp[i - 1].received) << "in order";
        }
    }
    for (const auto& d : log.drops)
    {
        EXPECT_EQ(d.flow, 1u) << "no TCP message is ever dropped above TCP";
    }
    EXPECT_FALSE(log.drops.empty()) << "the UDP flow beside it does lose packets";
    const wire::Summary s = h.Engine().Finish();
    EXPECT_EQ(s.flows[0].sent, 200u);
    EXPECT_EQ(s.flows[0].delivered, 200u);
    EXPECT_EQ(s.flows[0].dropped, 0u);
}

TEST(Tcp, AConnectionThatCannotBeOpenedLosesItsMessagesAtTheSender)
{
    ns3::Config::SetDefault("ns3::TcpSocket::ConnCount", ns3::UintegerValue(1));
    ns3::Config::SetDefault("ns3::TcpSocket::ConnTimeout", ns3::TimeValue(ns3::MilliSeconds(300)));
    NetHarness h;
    h.Build([]() { return BuildFromArgs({"--network=wifi", "--positions=" + OnXAxis({0, 500})}); });
    h.Configure({TcpFlow(0, 7000, 0, 1)});
    RunLog log = h.RunPeriodic({500}, 100 * kMs, 100 * kMs, 3 * kS);
    ns3::Config::SetDefault("ns3::TcpSocket::ConnCount", ns3::UintegerValue(6));
    ns3::Config::SetDefault("ns3::TcpSocket::ConnTimeout", ns3::TimeValue(ns3::Seconds(3)));
    EXPECT_TRUE(log.deliveries.empty());
    ASSERT_EQ(log.drops.size(), 30u);
    for (const auto& d : log.drops)
    {
        EXPECT_EQ(d.reason, DropReason::Other);
        EXPECT_EQ(d.node, 0u);
    }
    ExpectEachFateOnce(log);
}

TEST(Tcp, AWifiTcpFlowDeliversEveryMessage)
{
    NetHarness h;
    h.Build([]() {
        return BuildFromArgs(
            {"--network=wifi", "--wifiStandard=80211n", "--positions=" + OnXAxis({0, 20})});
    });
    h.Configure({TcpFlow(0, 7000, 0, 1), TcpFlow(1, 7000, 1, 0)});
    RunLog log = h.RunPeriodic({120, 40}, 10 * kMs, 100 * kMs, 2 * kS);
    EXPECT_GE(log.summary.flows[0].delivered, log.summary.flows[0].sent - 2);
    EXPECT_GE(log.summary.flows[1].delivered, 195u);
    EXPECT_TRUE(log.drops.empty());
    ExpectEachFateOnce(log);
}
