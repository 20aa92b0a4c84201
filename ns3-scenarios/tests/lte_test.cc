/*
 * LTE with EPC on the real ns-3 models (kept small: LTE is slow): a loop
 * through the remote host runs to completion, its delays are bounded below by
 * the configured EPC link delays and exceed a Wi-Fi baseline, packets sent
 * before the UE is attached are reported as Routing drops, and UE-to-UE flows
 * go through the PGW. At 1 and 2 ms periods RLC concatenates packets, and
 * every delivery is still the packet whose bytes arrived (against FlowMonitor's
 * own count); a send enters at the same place among its instant's events
 * (subframe starts) whether its step starts there or long before.
 */
#include "net_test_util.h"

#include "ns3/flow-monitor-helper.h"
#include "ns3/ipv4-flow-classifier.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <set>
#include <tuple>

using namespace netloop;
using namespace netloop::test;
using wire::DropReason;

namespace
{

constexpr uint64_t kS1u = 2 * kMs;
constexpr uint64_t kS5 = 1 * kMs;
constexpr uint64_t kRemote = 5 * kMs;

const std::vector<std::string> kEpc = {"--s1uLinkDelay=2ms",
                                       "--s5LinkDelay=1ms",
                                       "--remoteHostDelay=5ms"};

std::vector<std::string>
With(std::vector<std::string> args, const std::vector<std::string>& more)
{
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

} // namespace

TEST(Lte, ALoopThroughTheRemoteHostHasDelaysAboveTheEpcLinksAndTheWifiBaseline)
{
    NetHarness h;
    // Wi-Fi baseline: the same loop between two nodes 50 m apart.
    h.Build([]() { return BuildFromArgs({"--network=wifi", "--positions=" + OnXAxis({0, 50})}); });
    h.Configure({UdpFlow(0, 5000, 0, 1), UdpFlow(1, 5001, 1, 0)});
    RunLog wifi = h.RunPeriodic({100, 100}, 10 * kMs, 100 * kMs, 1500 * kMs);

    // LTE: UE 0 (sensor/actuator) 50 m from the eNB, controller on the remote host (node 1).
    h.Build([]() {
        return BuildFromArgs(With({"--network=lte", "--nodes=2", "--positions=50,0,0"}, kEpc));
    });
    EXPECT_NE(h.Built().description.find("S1-U 10Gbps/2ms, S5 10Gbps/1ms, remote host "
                                         "100Gbps/5ms"),
              std::string::npos)
        << h.Built().description;
    h.Configure({UdpFlow(0, 5000, 0, 1), UdpFlow(1, 5001, 1, 0)});
    RunLog lte = h.RunPeriodic({100, 100}, 10 * kMs, 100 * kMs, 1500 * kMs);

    // Completion: everything sent is accounted for; only the last few are still on their way.
    for (const auto& c : lte.summary.flows)
    {
        EXPECT_EQ(c.sent, 150u);
        EXPECT_GE(c.delivered, 140u);
        EXPECT_LE(c.sent - c.delivered - c.dropped, 4u) << "in flight at the end";
    }
    const uint64_t bound = kS1u + kS5 + kRemote;
    for (const auto& d : lte.deliveries)
    {
        EXPECT_GT(d.received - d.sent, bound) << "flow " << d.flow << " packet " << d.number;
    }
    for (uint32_t f : {0u, 1u})
    {
        EXPECT_GT(lte.MeanDelay(f), wifi.MeanDelay(f) + double(bound));
    }
    // Before the default bearer is up, packets die: uplink at the UE (node 0), downlink at
    // the PGW (node index U + 1 + M = 3). Nothing sent in the first second stays in flight.
    std::set<std::pair<uint32_t, uint64_t>> fated;
    std::set<uint32_t> dropNodes;
    for (const auto& d : lte.drops)
    {
        EXPECT_EQ(d.reason, DropReason::Routing);
        EXPECT_LT(d.sent, 100 * kMs) << "only before the UE is attached";
        EXPECT_EQ(d.node, d.flow == 0 ? 0u : 3u);
        dropNodes.insert(d.node);
        fated.insert({d.flow, d.number});
    }
    EXPECT_EQ(dropNodes, (std::set<uint32_t>{0, 3}));
    for (const auto& d : lte.deliveries)
    {
        EXPECT_TRUE(fated.insert({d.flow, d.number}).second) << "delivered and dropped";
    }
    for (uint32_t flow : {0u, 1u})
    {
        for (uint64_t n = 0; n < 100; ++n)
        {
            EXPECT_EQ(fated.count({flow, n}), 1u) << "flow " << flow << " packet " << n;
        }
    }
}

TEST(Lte, AUeToUeFlowGoesUpToThePgwAndBackDown)
{
    NetHarness h;
    h.Build([]() {
        return BuildFromArgs(With({"--network=lte", "--ues=2", "--positions=50,0,0;0,60,0"}, kEpc));
    });
    EXPECT_EQ(h.Built().nodes.GetN(), 3u) << "two UEs and the remote host";
    h.Configure({UdpFlow(0, 5000, 0, 1)});
    RunLog log = h.RunPeriodic({100}, 10 * kMs, 100 * kMs, 1 * kS, 100 * kMs);
    EXPECT_GE(log.summary.flows[0].delivered, 85u);
    for (const auto& d : log.deliveries)
    {
        EXPECT_GT(d.received - d.sent, 2 * (kS1u + kS5));
    }
    EXPECT_TRUE(log.drops.empty()) << "sent after the bearers were up";
}

TEST(Lte, BackgroundUesSendUplinkToTheRemoteHost)
{
    NetHarness h;
    std::vector<double> delays;
    for (uint32_t bg : {0u, 6u})
    {
        h.Build([bg]() {
            return BuildFromArgs({"--network=lte",
                                  "--bandwidth=6",
                                  "--positions=50,0,0",
                                  "--bgNodes=" + std::to_string(bg),
                                  "--bgRate=1Mbps"});
        });
        h.Configure({UdpFlow(0, 5000, 0, 1)});
        // 500-byte packets: a 100-byte one fits whatever share of the 6 RBs it gets.
        RunLog log = h.RunPeriodic({500}, 10 * kMs, 100 * kMs, 1 * kS, 100 * kMs);
        EXPECT_GE(log.summary.flows[0].delivered, 80u);
        delays.push_back(log.MeanDelay(0));
    }
    EXPECT_GT(delays[1], delays[0]) << "six UEs share a 6-RB uplink with the loop";
}

TEST(Lte, RlcBufferOverflowsAreQueueDropsAtTheUeAndTheEnb)
{
    // Bursts of 100 packets of 300 bytes at once overflow the RLC UM transmission buffers
    // (10 kB): uplink at the UE (node 0), downlink at the eNB (node U + 1 = 2).
    NetHarness h;
    h.Build([]() { return BuildFromArgs({"--network=lte", "--positions=50,0,0"}); });
    h.Configure({UdpFlow(0, 5000, 0, 1), UdpFlow(1, 5001, 1, 0)});
    wire::Step step;
    step.until = 3 * kS;
    for (uint64_t n = 0; n < 100; ++n)
    {
        step.sends.push_back(wire::SendRequest{0, n, 0, 1, 200 * kMs, 300});
        step.sends.push_back(wire::SendRequest{1, n, 0, 1, 200 * kMs, 300});
    }
    RunLog log;
    h.Step(step, &log);
    const wire::Summary s = h.Engine().Finish();
    std::set<uint32_t> nodes;
    for (const auto& d : log.drops)
    {
        EXPECT_EQ(d.reason, DropReason::Queue);
        EXPECT_EQ(d.node, d.flow == 0 ? 0u : 2u);
        nodes.insert(d.node);
    }
    EXPECT_EQ(nodes, (std::set<uint32_t>{0, 2}));
    for (const auto& c : s.flows)
    {
        EXPECT_EQ(c.sent, 100u);
        EXPECT_EQ(c.delivered + c.dropped, 100u) << "every packet's fate is known";
        EXPECT_GT(c.delivered, 20u);
    }
}

namespace
{

/// FlowMonitor's received packets of the flow to this destination port.
uint64_t
FlowMonitorRx(ns3::FlowMonitorHelper& helper, uint16_t port, uint64_t* tx)
{
    ns3::Ptr<ns3::FlowMonitor> monitor = helper.GetMonitor();
    monitor->CheckForLostPackets();
    auto classifier = ns3::DynamicCast<ns3::Ipv4FlowClassifier>(helper.GetClassifier());
    for (const auto& [id, stats] : monitor->GetFlowStats())
    {
        if (classifier->FindFlow(id).destinationPort == port)
        {
            *tx = stats.txPackets;
            return stats.rxPackets;
        }
    }
    ADD_FAILURE() << "no FlowMonitor flow to port " << port;
    return 0;
}

} // namespace

TEST(Lte, AtOneAndTwoMillisecondUplinkPeriodsEachDeliveryIsThePacketThatArrived)
{
    for (uint64_t period : {1 * kMs, 2 * kMs})
    {
        SCOPED_TRACE("period " + std::to_string(period) + " ns");
        NetHarness h;
        h.Build([]() {
            return BuildFromArgs(With({"--network=lte", "--positions=100,0,0"}, kEpc));
        });
        // Counted independently of netloop's tags: FlowMonitor's own byte tags.
        ns3::FlowMonitorHelper flowMonitor;
        flowMonitor.InstallAll();
        h.Configure({UdpFlow(0, 5000, 0, 1)});
        RunLog log = h.RunPeriodic({64}, period, 10 * kMs, 600 * kMs, 100 * kMs);
        uint64_t tx = 0;
        const uint64_t rx = FlowMonitorRx(flowMonitor, 5000, &tx);
        const wire::FlowCounters& c = log.summary.flows[0];
        EXPECT_EQ(c.sent, 500 * kMs / period);
        EXPECT_EQ(tx, c.sent);
        EXPECT_EQ(rx, c.delivered) << "FlowMonitor vs the engine's deliveries";
        EXPECT_EQ(log.deliveries.size(), c.delivered);
        EXPECT_GT(c.delivered, c.sent * 9 / 10);
        // Each delivery is a different packet, with its own send time, after the core links.
        std::set<uint64_t> numbers;
        for (const auto& d : log.deliveries)
        {
            EXPECT_TRUE(numbers.insert(d.number).second) << "packet " << d.number << " twice";
            EXPECT_EQ(d.sent, 100 * kMs + d.number * period) << "packet " << d.number;
            EXPECT_GT(d.received - d.sent, kS1u + kS5 + kRemote) << "packet " << d.number;
        }
        EXPECT_TRUE(log.drops.empty()) << "sent after the bearer is up";
    }
}

TEST(Lte, ASendEntersAtTheSamePlaceAmongItsInstantsEventsWhenAnnouncedLateOrEarly)
{
    // Uplink and downlink every millisecond (every subframe start), announced
    // either in the step that starts at the send (as the bridge does without
    // lookahead) or all in one step from t = 0 (lookahead, standalone).
    constexpr uint64_t kStop = 400 * kMs;
    std::vector<RunLog> logs;
    for (bool early : {false, true})
    {
        NetHarness h;
        h.Build([]() {
            return BuildFromArgs(With({"--network=lte", "--positions=100,0,0"}, kEpc));
        });
        h.Configure({UdpFlow(0, 5000, 0, 1), UdpFlow(1, 5001, 1, 0)});
        RunLog log;
        wire::Step all;
        all.until = kStop;
        for (uint64_t n = 0; n * kMs < kStop; ++n)
        {
            const uint64_t t = n * kMs;
            std::vector<wire::SendRequest> sends = {wire::SendRequest{0, n, 0, 1, t, 64},
                                                    wire::SendRequest{1, n, 0, 1, t, 64}};
            if (early)
            {
                all.sends.insert(all.sends.end(), sends.begin(), sends.end());
                continue;
            }
            wire::Step step;
            step.until = t + kMs;
            step.sends = sends;
            h.Step(step, &log);
        }
        if (early)
        {
            h.Step(all, &log);
        }
        wire::Step drain;
        drain.until = kStop + 200 * kMs;
        h.Step(drain, &log);
        logs.push_back(log);
    }
    auto key = [](const RunLog& log) {
        std::vector<std::tuple<uint32_t, uint64_t, uint64_t>> out;
        for (const auto& d : log.deliveries)
        {
            out.emplace_back(d.flow, d.number, d.received);
        }
        std::sort(out.begin(), out.end());
        return out;
    };
    EXPECT_GT(logs[0].deliveries.size(), 700u);
    EXPECT_EQ(key(logs[0]), key(logs[1]));
    EXPECT_EQ(logs[0].drops.size(), logs[1].drops.size());
    // In particular the uplink delay of one packet does not depend on when it was announced.
    EXPECT_EQ(logs[0].MeanDelay(0), logs[1].MeanDelay(0));
}
