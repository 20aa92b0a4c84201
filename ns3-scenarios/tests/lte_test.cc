/*
 * LTE with EPC on the real ns-3 models (kept small: LTE is slow): a loop
 * through the remote host runs to completion, its delays are bounded below by
 * the configured EPC link delays and exceed a Wi-Fi baseline, packets sent
 * before the UE is attached are reported as Routing drops, and UE-to-UE flows
 * go through the PGW.
 */
#include "net_test_util.h"

#include <gtest/gtest.h>
#include <set>

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
