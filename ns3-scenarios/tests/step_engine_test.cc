/*
 * The stepping core, in-process (no socket), on real ns-3 point-to-point
 * networks: exact arrival times, queueing, loss reproducibility, step
 * boundaries, stop-at-delivery, drop reporting and input validation.
 *
 * Known answer for one hop: a UDP payload of S bytes sent at t over a link of
 * rate R and delay d arrives at t + d + (S + 8 UDP + 20 IP + 2 PPP) * 8 / R,
 * exactly; over h hops (store and forward, idle links) at t + h * (d + tx).
 */
#include "p2p-network.h"
#include "step-engine.h"
#include "step-server.h"

#include "ns3/constant-velocity-mobility-model.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-generator.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/node-list.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace netloop;
using netloop::wire::Delivery;
using netloop::wire::DropEvent;
using netloop::wire::DropReason;
using netloop::wire::ErrorCode;
using netloop::wire::FlowSpec;
using netloop::wire::SendRequest;
using netloop::wire::Transport;

namespace
{

constexpr uint64_t kMs = 1000000;
constexpr uint64_t kUs = 1000;

/// Transmission time of a UDP payload of size bytes on one link, ns; fails unless exact.
uint64_t
TxNs(uint32_t size, uint64_t bitRate)
{
    const uint64_t bits = (uint64_t(size) + 8 + 20 + 2) * 8;
    EXPECT_EQ(bits * 1000000000ULL % bitRate, 0u) << "choose a rate that makes the test exact";
    return bits * 1000000000ULL / bitRate;
}

P2pParameters
P2p(const std::string& rate,
    const std::string& delay,
    uint32_t queue = 100,
    double loss = 0.0,
    const std::string& topology = "chain",
    uint32_t nodes = 2)
{
    P2pOptions o;
    o.dataRate = rate;
    o.delay = delay;
    o.queueSize = queue;
    o.lossRate = loss;
    o.topology = topology;
    auto parsed = ParseP2pOptions(o, nodes);
    if (auto* error = std::get_if<std::string>(&parsed))
    {
        ADD_FAILURE() << *error;
        return P2pParameters{};
    }
    return std::get<P2pParameters>(parsed);
}

FlowSpec
Flow(uint32_t id, uint16_t port, uint32_t src, uint32_t dst, bool stop = false)
{
    return FlowSpec{id, port, src, dst, Transport::Udp, stop};
}

SendRequest
Send(uint32_t flow, uint64_t number, uint64_t time, uint32_t size, uint16_t idx = 0, uint16_t n = 1)
{
    return SendRequest{flow, number, idx, n, time, size};
}

wire::Step
StepTo(uint64_t until, std::vector<SendRequest> sends = {}, bool stopAtDelivery = false)
{
    wire::Step s;
    s.until = until;
    s.stopAtDelivery = stopAtDelivery;
    s.sends = std::move(sends);
    return s;
}

class StepEngineTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Reset();
    }

    void Reset()
    {
        m_engine.reset();
        ns3::Simulator::Destroy();
    }

    /// A fresh simulation with a p2p network and an engine on it.
    StepEngine& Build(const P2pParameters& p, uint32_t nodes, uint32_t seed = 1, uint64_t run = 1)
    {
        Reset();
        ns3::RngSeedManager::SetSeed(seed);
        ns3::RngSeedManager::SetRun(run);
        BuiltNetwork built = BuildP2pNetwork(p, nodes, 0);
        m_engine = std::make_unique<StepEngine>(built.nodes, built.addressOf, built.description);
        return *m_engine;
    }

    static void Configure(StepEngine& engine, std::vector<FlowSpec> flows)
    {
        auto r = engine.Configure(wire::Configure{std::move(flows)});
        if (auto* e = std::get_if<wire::Error>(&r))
        {
            FAIL() << "Configure failed: " << e->message;
        }
    }

    /// Runs a step that must succeed.
    static wire::StepDone Run(StepEngine& engine, const wire::Step& step)
    {
        auto r = engine.Step(step);
        if (auto* e = std::get_if<wire::Error>(&r))
        {
            ADD_FAILURE() << "Step failed: " << wire::ToString(e->code) << ": " << e->message;
            return wire::StepDone{};
        }
        return std::get<wire::StepDone>(r);
    }

    /// Runs a step that must fail; returns the error.
    static wire::Error Reject(StepEngine& engine, const wire::Step& step)
    {
        auto r = engine.Step(step);
        if (!std::holds_alternative<wire::Error>(r))
        {
            ADD_FAILURE() << "the step was accepted";
            return wire::Error{};
        }
        return std::get<wire::Error>(r);
    }

    std::unique_ptr<StepEngine> m_engine;
};

TEST_F(StepEngineTest, OneHopArrivalIsExactToTheNanosecond)
{
    struct Case
    {
        std::string rate;
        uint64_t bps;
        std::string delay;
        uint64_t delayNs;
    };

    const std::vector<Case> cases = {
        {"8Mbps", 8000000, "2ms", 2 * kMs},
        {"10Mbps", 10000000, "1234567ns", 1234567},
        {"1Gbps", 1000000000, "0", 0},
        {"64kbps", 64000, "50ms", 50 * kMs},
    };
    // From 1 byte: a UDP control packet's identity is a byte tag on its payload.
    const std::vector<uint32_t> sizes = {1, 64, 1000, 1472};
    for (const Case& c : cases)
    {
        StepEngine& engine = Build(P2p(c.rate, c.delay), 2);
        Configure(engine, {Flow(0, 9000, 0, 1)});
        uint64_t t = 1000123; // an odd send time: nothing may round it
        uint64_t number = 0;
        for (uint32_t size : sizes)
        {
            SCOPED_TRACE(c.rate + " " + c.delay + " size " + std::to_string(size));
            const uint64_t expected = t + c.delayNs + TxNs(size, c.bps);
            wire::StepDone done =
                Run(engine, StepTo(expected + 10 * kMs, {Send(0, number, t, size, 2, 5)}));
            ASSERT_EQ(done.deliveries.size(), 1u);
            const Delivery& d = done.deliveries[0];
            EXPECT_EQ(d.received, expected);
            EXPECT_EQ(d.sent, t);
            EXPECT_EQ(d.flow, 0u);
            EXPECT_EQ(d.number, number);
            EXPECT_EQ(d.stateIndex, 2u);
            EXPECT_EQ(d.stateCount, 5u);
            EXPECT_EQ(d.size, size);
            EXPECT_TRUE(done.drops.empty());
            EXPECT_EQ(done.reached, expected + 10 * kMs);
            t = done.reached + 777;
            ++number;
        }
        wire::Summary summary = engine.Finish();
        ASSERT_EQ(summary.flows.size(), 1u);
        EXPECT_EQ(summary.flows[0].sent, sizes.size());
        EXPECT_EQ(summary.flows[0].delivered, sizes.size());
        EXPECT_EQ(summary.flows[0].dropped, 0u);
        EXPECT_EQ(engine.GetInFlightCount(), 0u);
    }
}

TEST_F(StepEngineTest, MultiHopArrivalIsExactInChainsAndStars)
{
    const uint64_t bps = 8000000;
    const uint64_t d = 3 * kMs;
    const uint32_t size = 100;
    const uint64_t hop = d + TxNs(size, bps);
    {
        StepEngine& engine = Build(P2p("8Mbps", "3ms", 100, 0.0, "chain", 4), 4);
        Configure(engine, {Flow(0, 9000, 0, 3), Flow(1, 9000, 3, 1)});
        wire::StepDone done =
            Run(engine, StepTo(100 * kMs, {Send(0, 1, 5 * kMs, size), Send(1, 1, 5 * kMs, size)}));
        ASSERT_EQ(done.deliveries.size(), 2u);
        // 1 -> 0 ... 3: three hops; 3 -> 1: two hops, so it arrives first.
        EXPECT_EQ(done.deliveries[0].flow, 1u);
        EXPECT_EQ(done.deliveries[0].received, 5 * kMs + 2 * hop);
        EXPECT_EQ(done.deliveries[1].flow, 0u);
        EXPECT_EQ(done.deliveries[1].received, 5 * kMs + 3 * hop);
        EXPECT_NE(engine.GetDescription().find("chain of 4 nodes"), std::string::npos);
    }
    {
        StepEngine& engine = Build(P2p("8Mbps", "3ms", 100, 0.0, "star", 4), 4);
        Configure(engine, {Flow(0, 9000, 1, 3), Flow(1, 9000, 0, 2)});
        wire::StepDone done =
            Run(engine, StepTo(100 * kMs, {Send(0, 1, 0, size), Send(1, 1, 0, size)}));
        ASSERT_EQ(done.deliveries.size(), 2u);
        EXPECT_EQ(done.deliveries[0].flow, 1u); // hub to leaf: one hop
        EXPECT_EQ(done.deliveries[0].received, hop);
        EXPECT_EQ(done.deliveries[1].flow, 0u); // leaf to leaf through the hub
        EXPECT_EQ(done.deliveries[1].received, 2 * hop);
    }
}

TEST_F(StepEngineTest, DatagramsLargerThanTheMtuArriveWithTheirLastFragment)
{
    // 3000 payload bytes: a 3008-byte UDP datagram in IP fragments carrying 1480,
    // 1480 and 48 bytes, each with a 20-byte IP header and a 2-byte PPP header.
    StepEngine& engine = Build(P2p("8Mbps", "2ms"), 2);
    Configure(engine, {Flow(0, 9000, 0, 1)});
    wire::StepDone done = Run(engine, StepTo(100 * kMs, {Send(0, 9, 0, 3000, 1, 2)}));
    ASSERT_EQ(done.deliveries.size(), 1u);
    const uint64_t wire = (1502 + 1502 + 70) * 8 * 1000000000ULL / 8000000;
    EXPECT_EQ(done.deliveries[0].received, 2 * kMs + wire);
    EXPECT_EQ(done.deliveries[0].size, 3000u);
    EXPECT_EQ(done.deliveries[0].number, 9u);
    EXPECT_EQ(done.deliveries[0].stateIndex, 1u);
    EXPECT_EQ(done.deliveries[0].stateCount, 2u);
}

TEST_F(StepEngineTest, DeviceQueueOverflowIsReportedAsQueueDrops)
{
    // Ten packets at once into a queue of 3: one on the wire, three queued, six dropped.
    const uint64_t bps = 1000000;
    const uint32_t size = 95; // 125 bytes on the wire: 1 ms each at 1 Mbps
    StepEngine& engine = Build(P2p("1Mbps", "5ms", 3), 2);
    Configure(engine, {Flow(0, 9000, 0, 1)});
    std::vector<SendRequest> sends;
    for (uint64_t n = 0; n < 10; ++n)
    {
        sends.push_back(Send(0, n, 2 * kMs, size));
    }
    wire::StepDone done = Run(engine, StepTo(100 * kMs, sends));
    const uint64_t tx = TxNs(size, bps);
    ASSERT_EQ(tx, kMs);
    ASSERT_EQ(done.deliveries.size(), 4u);
    for (uint64_t k = 0; k < 4; ++k)
    {
        EXPECT_EQ(done.deliveries[k].number, k);
        EXPECT_EQ(done.deliveries[k].received, 2 * kMs + 5 * kMs + (k + 1) * tx);
    }
    ASSERT_EQ(done.drops.size(), 6u);
    for (uint64_t k = 0; k < 6; ++k)
    {
        const DropEvent& e = done.drops[k];
        EXPECT_EQ(e.number, 4 + k);
        EXPECT_EQ(e.reason, DropReason::Queue);
        EXPECT_EQ(e.node, 0u);
        EXPECT_EQ(e.time, 2 * kMs);
        EXPECT_EQ(e.sent, 2 * kMs);
    }
    wire::Summary s = engine.Finish();
    EXPECT_EQ(s.flows[0].sent, 10u);
    EXPECT_EQ(s.flows[0].delivered, 4u);
    EXPECT_EQ(s.flows[0].dropped, 6u);
}

/// The packet numbers lost in a run of 400 packets, 1 ms apart, at a 30 % loss rate.
std::set<uint64_t>
LostNumbers(StepEngine& engine)
{
    std::set<uint64_t> lost;
    std::set<uint64_t> delivered;
    const uint64_t tx = TxNs(64, 8000000);
    for (uint64_t n = 0; n < 400; ++n)
    {
        auto r = engine.Step(StepTo((n + 1) * kMs, {Send(0, n, n * kMs, 64)}));
        if (!std::holds_alternative<wire::StepDone>(r))
        {
            ADD_FAILURE() << std::get<wire::Error>(r).message;
            return lost;
        }
        const auto& done = std::get<wire::StepDone>(r);
        for (const Delivery& d : done.deliveries)
        {
            delivered.insert(d.number);
        }
        for (const DropEvent& e : done.drops)
        {
            EXPECT_EQ(e.reason, DropReason::Phy);
            EXPECT_EQ(e.node, 1u) << "lost at the receiving device";
            EXPECT_EQ(e.time, e.sent + 100 * kUs + tx) << "lost when it would have arrived";
            lost.insert(e.number);
        }
    }
    auto r = engine.Step(StepTo(500 * kMs));
    for (const Delivery& d : std::get<wire::StepDone>(r).deliveries)
    {
        delivered.insert(d.number);
    }
    EXPECT_EQ(lost.size() + delivered.size(), 400u) << "every packet delivered or lost, once";
    for (uint64_t n : lost)
    {
        EXPECT_EQ(delivered.count(n), 0u);
    }
    return lost;
}

TEST_F(StepEngineTest, LossIsReproducibleForASeedAndRunAndChangesWithTheRun)
{
    auto lossRun = [this](uint64_t run) {
        StepEngine& engine = Build(P2p("8Mbps", "100us", 100, 0.3), 2, 1, run);
        Configure(engine, {Flow(0, 9000, 0, 1)});
        return LostNumbers(engine);
    };
    const std::set<uint64_t> first = lossRun(1);
    const std::set<uint64_t> again = lossRun(1);
    const std::set<uint64_t> other = lossRun(2);
    EXPECT_EQ(first, again);
    EXPECT_NE(first, other);
    // 400 Bernoulli(0.3) trials: 120 expected, standard deviation 9.2.
    for (const auto* s : {&first, &other})
    {
        EXPECT_GT(s->size(), 80u);
        EXPECT_LT(s->size(), 160u);
    }
}

TEST_F(StepEngineTest, ADeliveryExactlyAtUntilBelongsToThatStep)
{
    const uint64_t arrival = 2 * kMs + TxNs(64, 8000000);
    StepEngine& engine = Build(P2p("8Mbps", "2ms"), 2);
    Configure(engine, {Flow(0, 9000, 0, 1)});
    wire::StepDone done = Run(engine, StepTo(arrival, {Send(0, 0, 0, 64)}));
    EXPECT_EQ(done.reached, arrival);
    ASSERT_EQ(done.deliveries.size(), 1u);
    EXPECT_EQ(done.deliveries[0].received, arrival);
    // Nothing at that instant is left over for the next step.
    done = Run(engine, StepTo(arrival + kMs));
    EXPECT_TRUE(done.deliveries.empty());
}

TEST_F(StepEngineTest, ASendAtUntilHappensInThatStepAndZeroLengthStepsRunTheirSends)
{
    const uint64_t flight = 2 * kMs + TxNs(64, 8000000);
    StepEngine& engine = Build(P2p("8Mbps", "2ms"), 2);
    Configure(engine, {Flow(0, 9000, 0, 1)});
    wire::StepDone done = Run(engine, StepTo(10 * kMs, {Send(0, 0, 10 * kMs, 64)}));
    EXPECT_EQ(engine.Finish().flows[0].sent, 1u) << "sent at the step's last instant";
    EXPECT_TRUE(done.deliveries.empty());
    // A step to the time already reached: its sends at that time go out, time stays.
    done = Run(engine, StepTo(10 * kMs, {Send(0, 1, 10 * kMs, 64)}));
    EXPECT_EQ(done.reached, 10 * kMs);
    EXPECT_EQ(engine.Finish().flows[0].sent, 2u);
    done = Run(engine, StepTo(20 * kMs));
    ASSERT_EQ(done.deliveries.size(), 2u);
    EXPECT_EQ(done.deliveries[0].received, 10 * kMs + flight);
    // The second left the same device one transmission time later.
    EXPECT_EQ(done.deliveries[1].received, 10 * kMs + flight + TxNs(64, 8000000));
}

TEST_F(StepEngineTest, StopAtDeliveryEndsAtTheFirstControlDeliveryWithEverythingAtThatInstant)
{
    // Chain 0 - 1 - 2. Flow 0 (0 -> 1) stops a step, flow 1 (2 -> 1) does not; both
    // send the same size at the same time, so both arrive at node 1 at instant A.
    const uint64_t tx = TxNs(64, 8000000);
    const uint64_t a = 1 * kMs + 2 * kMs + tx;
    StepEngine& engine = Build(P2p("8Mbps", "2ms", 100, 0.0, "chain", 3), 3);
    Configure(engine, {Flow(0, 9000, 0, 1, true), Flow(1, 9001, 2, 1, false)});
    wire::StepDone done =
        Run(engine,
            StepTo(100 * kMs,
                   {Send(0, 0, 1 * kMs, 64), Send(1, 0, 1 * kMs, 64), Send(0, 1, 5 * kMs, 64)},
                   true));
    EXPECT_EQ(done.reached, a);
    ASSERT_EQ(done.deliveries.size(), 2u);
    EXPECT_EQ(done.deliveries[0].flow, 0u);
    EXPECT_EQ(done.deliveries[1].flow, 1u);
    EXPECT_EQ(done.deliveries[0].received, a);
    EXPECT_EQ(done.deliveries[1].received, a);
    EXPECT_EQ(engine.Finish().flows[0].sent, 1u) << "the send at 5ms has not happened yet";

    // The send at 5 ms stays scheduled; the next event-driven step ends at its arrival.
    done = Run(engine, StepTo(100 * kMs, {}, true));
    EXPECT_EQ(done.reached, 5 * kMs + 2 * kMs + tx);
    ASSERT_EQ(done.deliveries.size(), 1u);
    EXPECT_EQ(done.deliveries[0].number, 1u);

    // Without stop_at_delivery, or for a flow that does not stop, the step runs to until.
    done = Run(engine, StepTo(200 * kMs, {Send(0, 2, 110 * kMs, 64)}, false));
    EXPECT_EQ(done.reached, 200 * kMs);
    EXPECT_EQ(done.deliveries.size(), 1u);
    done = Run(engine, StepTo(300 * kMs, {Send(1, 1, 210 * kMs, 64)}, true));
    EXPECT_EQ(done.reached, 300 * kMs);
    EXPECT_EQ(done.deliveries.size(), 1u);
}

TEST_F(StepEngineTest, RejectedStepsNameTheTimesAndChangeNothing)
{
    StepEngine& engine = Build(P2p("8Mbps", "2ms"), 2);
    EXPECT_EQ(Reject(engine, StepTo(kMs)).code, ErrorCode::UnexpectedMessage)
        << "Step before Configure";
    Configure(engine, {Flow(0, 9000, 0, 1)});
    Run(engine, StepTo(2 * kMs));

    wire::Error e = Reject(engine, StepTo(1 * kMs));
    EXPECT_EQ(e.code, ErrorCode::InvalidStep);
    EXPECT_NE(e.message.find("1ms"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("2ms"), std::string::npos) << e.message;

    // A valid send together with one in the past: the whole step is refused.
    e = Reject(engine, StepTo(10 * kMs, {Send(0, 0, 3 * kMs, 64), Send(0, 1, 1 * kMs, 64)}));
    EXPECT_EQ(e.code, ErrorCode::InvalidStep);
    EXPECT_NE(e.message.find("at 1ms is before the time already reached, 2ms"), std::string::npos)
        << e.message;

    e = Reject(engine, StepTo(10 * kMs, {Send(5, 0, 3 * kMs, 64)}));
    EXPECT_NE(e.message.find("flow 5"), std::string::npos) << e.message;
    e = Reject(engine, StepTo(10 * kMs, {Send(0, 0, 3 * kMs, 65508)}));
    EXPECT_NE(e.message.find("65507"), std::string::npos) << e.message;
    e = Reject(engine, StepTo(10 * kMs, {Send(0, 0, 3 * kMs, 0)}));
    EXPECT_NE(e.message.find("0 payload bytes"), std::string::npos) << e.message;
    e = Reject(engine, StepTo(uint64_t(1) << 63));
    EXPECT_NE(e.message.find("largest time"), std::string::npos) << e.message;
    e = Reject(engine, StepTo(10 * kMs, {Send(0, 0, ~uint64_t(0), 64)}));
    EXPECT_EQ(e.code, ErrorCode::InvalidStep);

    wire::Step kin = StepTo(10 * kMs);
    kin.kinematics.push_back(wire::NodeKinematics{7, {0, 0, 0}, {0, 0, 0}});
    e = Reject(engine, kin);
    EXPECT_NE(e.message.find("node 7"), std::string::npos) << e.message;
    kin.kinematics[0] = wire::NodeKinematics{1, {std::nan(""), 0, 0}, {0, 0, 0}};
    e = Reject(engine, kin);
    EXPECT_NE(e.message.find("finite"), std::string::npos) << e.message;

    EXPECT_EQ(engine.GetNow(), 2 * kMs);
    wire::StepDone done = Run(engine, StepTo(50 * kMs));
    EXPECT_TRUE(done.deliveries.empty()) << "nothing from the refused steps was scheduled";
    EXPECT_EQ(engine.Finish().flows[0].sent, 0u);
}

TEST_F(StepEngineTest, ConfigureValidatesFlowsAgainstTheNetwork)
{
    struct Case
    {
        std::vector<FlowSpec> flows;
        std::string needle;
    };

    // A port is one loop direction at its destination, whatever the transport.
    FlowSpec tcp = Flow(1, 9000, 2, 1);
    tcp.transport = Transport::Tcp;
    const std::vector<Case> cases = {
        {{Flow(0, 9000, 0, 1), tcp}, "both use port 9000 at node 1"},
        {{Flow(0, 9000, 0, 1), Flow(1, 9000, 2, 1)}, "both use port 9000 at node 1"},
        {{Flow(0, 9000, 0, 5)}, "destination node 5 does not exist"},
        {{Flow(0, 9000, 4, 1)}, "source node 4 does not exist"},
        {{Flow(1, 9000, 0, 1)}, "flow ids must equal their index"},
        {{Flow(0, 9000, 1, 1)}, "to itself"},
        {{Flow(0, 0, 0, 1)}, "port 0"},
    };
    for (const Case& c : cases)
    {
        StepEngine& engine = Build(P2p("8Mbps", "2ms", 100, 0.0, "chain", 3), 3);
        auto r = engine.Configure(wire::Configure{c.flows});
        ASSERT_TRUE(std::holds_alternative<wire::Error>(r)) << c.needle;
        const wire::Error& e = std::get<wire::Error>(r);
        EXPECT_EQ(e.code, ErrorCode::InvalidConfig);
        EXPECT_NE(e.message.find(c.needle), std::string::npos) << e.message;
        EXPECT_FALSE(engine.IsConfigured());
    }
    // The same port at different destinations is fine; a second Configure is not.
    StepEngine& engine = Build(P2p("8Mbps", "2ms", 100, 0.0, "chain", 3), 3);
    auto r = engine.Configure(wire::Configure{{Flow(0, 9000, 0, 1), Flow(1, 9000, 1, 2)}});
    ASSERT_TRUE(std::holds_alternative<wire::Configured>(r));
    EXPECT_EQ(std::get<wire::Configured>(r).nodeCount, 3u);
    r = engine.Configure(wire::Configure{});
    ASSERT_TRUE(std::holds_alternative<wire::Error>(r));
    EXPECT_EQ(std::get<wire::Error>(r).code, ErrorCode::UnexpectedMessage);
}

TEST_F(StepEngineTest, FlowPortsInTheEphemeralRangeDoNotCollideWithSendingSockets)
{
    // ns-3 hands out ephemeral ports from 49153: a flow may still use that port.
    StepEngine& engine = Build(P2p("8Mbps", "2ms"), 2);
    Configure(engine, {Flow(0, 9000, 0, 1), Flow(1, 49153, 1, 0), Flow(2, 49154, 0, 1)});
    wire::StepDone done =
        Run(engine, StepTo(50 * kMs, {Send(0, 0, 0, 10), Send(1, 0, 0, 10), Send(2, 0, 0, 10)}));
    EXPECT_EQ(done.deliveries.size(), 3u);
}

TEST_F(StepEngineTest, KinematicsSetPositionAndVelocityAtTheStepStart)
{
    StepEngine& engine = Build(P2p("8Mbps", "2ms"), 2);
    Configure(engine, {});
    Run(engine, StepTo(1000 * kMs));
    wire::Step step = StepTo(3000 * kMs);
    step.kinematics.push_back(wire::NodeKinematics{1, {1.0, 2.0, 3.0}, {0.5, 0.0, -1.0}});
    Run(engine, step);
    // Set at 1 s, read at 3 s: moved 2 s at the given velocity.
    auto model = ns3::NodeList::GetNode(1)->GetObject<ns3::MobilityModel>();
    ASSERT_TRUE(model);
    EXPECT_EQ(model->GetInstanceTypeId().GetName(), "ns3::ConstantVelocityMobilityModel");
    const ns3::Vector p = model->GetPosition();
    EXPECT_DOUBLE_EQ(p.x, 2.0);
    EXPECT_DOUBLE_EQ(p.y, 2.0);
    EXPECT_DOUBLE_EQ(p.z, 1.0);
    EXPECT_DOUBLE_EQ(model->GetVelocity().x, 0.5);
}

/// Counts what it is told, for trace hooking tests.
class CountingSink : public DropSink
{
  public:
    void ReportDrop(ns3::Ptr<const ns3::Packet>, uint32_t nodeIndex, DropReason reason) override
    {
        reports.push_back({nodeIndex, reason});
    }

    std::vector<std::pair<uint32_t, DropReason>> reports;
};

TEST_F(StepEngineTest, StandardDropTracesAreHookedAndCanBeUndone)
{
    StepEngine& engine = Build(P2p("8Mbps", "2ms", 100, 1.0), 2);
    std::vector<std::string> hooked = engine.GetDropTraces().Describe();
    auto count = [&hooked](const std::string& name) {
        return std::count(hooked.begin(), hooked.end(), name);
    };
    EXPECT_EQ(count("ns3::Ipv4L3Protocol::Drop"), 2);
    EXPECT_EQ(count("ns3::TrafficControlLayer::TcDrop"), 2);
    EXPECT_EQ(count("ns3::PointToPointNetDevice::PhyRxDrop"), 2);
    EXPECT_EQ(count("ns3::PointToPointNetDevice::PhyTxDrop"), 2);
    EXPECT_EQ(count("ns3::PointToPointNetDevice::MacTxDrop"), 2);
    EXPECT_EQ(count("ns3::DropTailQueue<Packet>::Drop"), 2);
    for (const std::string& h : hooked)
    {
        EXPECT_EQ(h.find("QueueDisc"), std::string::npos) << "p2p devices have no queue disc";
    }

    // A second sink on the same nodes sees every loss (loss rate 1) until disconnected.
    CountingSink sink;
    DropTraceConnections connections;
    ns3::NodeContainer nodes;
    nodes.Add(ns3::NodeList::GetNode(0));
    nodes.Add(ns3::NodeList::GetNode(1));
    EXPECT_EQ(HookStandardDrops(nodes, &sink, connections), 12u);
    Configure(engine, {Flow(0, 9000, 0, 1)});
    wire::StepDone done = Run(engine, StepTo(10 * kMs, {Send(0, 0, 0, 64)}));
    ASSERT_EQ(done.drops.size(), 1u);
    EXPECT_EQ(done.drops[0].reason, DropReason::Phy);
    ASSERT_EQ(sink.reports.size(), 1u);
    EXPECT_EQ(sink.reports[0].first, 1u);
    EXPECT_EQ(sink.reports[0].second, DropReason::Phy);
    connections.DisconnectAll();
    done = Run(engine, StepTo(20 * kMs, {Send(0, 1, 10 * kMs, 64)}));
    EXPECT_EQ(done.drops.size(), 1u);
    EXPECT_EQ(sink.reports.size(), 1u) << "nothing reported after DisconnectAll";
}

/// Two separate links, 0-1 and 2-3 (8 Mbps, 1 ms), built the way a user's script would.
ns3::NodeContainer
TwoSeparateLinks(bool populateGlobalRoutes)
{
    ns3::Ipv4AddressGenerator::Reset();
    ns3::NodeContainer nodes;
    nodes.Create(4);
    ns3::InternetStackHelper().Install(nodes);
    ns3::PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", ns3::StringValue("8Mbps"));
    p2p.SetChannelAttribute("Delay", ns3::StringValue("1ms"));
    ns3::Ipv4AddressHelper addresses("10.9.0.0", "255.255.255.0");
    addresses.Assign(p2p.Install(nodes.Get(0), nodes.Get(1)));
    addresses.NewNetwork();
    addresses.Assign(p2p.Install(nodes.Get(2), nodes.Get(3)));
    if (populateGlobalRoutes)
    {
        ns3::Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    }
    return nodes;
}

TEST_F(StepEngineTest, AUsersNetworkIsServedAsIsAndNoRouteIsARoutingDropAtTheSender)
{
    // Only the connected routes: node 0 has no route to node 3's subnet.
    Reset();
    StepServer server(TwoSeparateLinks(false)); // the one call a user's script makes, then Serve()
    StepEngine& engine = server.GetEngine();
    EXPECT_EQ(engine.GetDescription(), "ns-3 network of 4 nodes");
    Configure(engine, {Flow(0, 9000, 0, 1), Flow(1, 9000, 0, 3)});
    wire::StepDone done =
        Run(engine, StepTo(10 * kMs, {Send(0, 0, 1 * kMs, 64), Send(1, 0, 2 * kMs, 64)}));
    ASSERT_EQ(done.deliveries.size(), 1u);
    EXPECT_EQ(done.deliveries[0].flow, 0u);
    EXPECT_EQ(done.deliveries[0].received, 1 * kMs + 1 * kMs + TxNs(64, 8000000));
    ASSERT_EQ(done.drops.size(), 1u);
    EXPECT_EQ(done.drops[0].flow, 1u);
    EXPECT_EQ(done.drops[0].reason, DropReason::Routing);
    EXPECT_EQ(done.drops[0].node, 0u);
    EXPECT_EQ(done.drops[0].time, 2 * kMs);
    wire::Summary summary = engine.Finish();
    EXPECT_EQ(summary.flows[1].sent, 1u);
    EXPECT_EQ(summary.flows[1].dropped, 1u);
}

TEST_F(StepEngineTest, AnExpiredTtlIsARoutingDropWhereItExpires)
{
    // Global routing gives the stub nodes 0 and 1 default routes through each other,
    // so a packet for node 3 bounces on link 0-1 until its TTL (64) runs out.
    Reset();
    StepServer server(TwoSeparateLinks(true));
    StepEngine& engine = server.GetEngine();
    Configure(engine, {Flow(0, 9000, 0, 3)});
    wire::StepDone done = Run(engine, StepTo(1000 * kMs, {Send(0, 0, 0, 64)}));
    EXPECT_TRUE(done.deliveries.empty());
    ASSERT_EQ(done.drops.size(), 1u);
    EXPECT_EQ(done.drops[0].reason, DropReason::Routing);
    // Sent with TTL 64; a node that receives it with TTL 1 does not forward it. That is
    // the 64th arrival, which (odd arrivals at node 1, even at node 0) is at node 0.
    EXPECT_EQ(done.drops[0].node, 0u);
    EXPECT_EQ(done.drops[0].time, 64 * (1 * kMs + TxNs(64, 8000000)));
}

TEST_F(StepEngineTest, AStopLeftInTheSimulatorDoesNotEndAStepEarly)
{
    StepEngine& engine = Build(P2p("8Mbps", "2ms"), 2);
    Configure(engine, {Flow(0, 9000, 0, 1)});
    ns3::Simulator::Stop(ns3::MilliSeconds(3)); // as a user's script might have done
    wire::StepDone done = Run(engine, StepTo(50 * kMs, {Send(0, 0, 10 * kMs, 64)}));
    EXPECT_EQ(done.reached, 50 * kMs);
    EXPECT_EQ(done.deliveries.size(), 1u);
}

// ----- answer rules: the engine sends event-triggered answers itself -----

/// A rule answering flow 0 (node 0 -> 1) on flow 1 (node 1 -> 0).
wire::AnswerRule
Rule(uint64_t delay, uint32_t size, uint64_t maxDelay, bool dropStale, uint64_t lastTrigger)
{
    return wire::AnswerRule{0, 1, delay, size, 1, maxDelay, dropStale, lastTrigger};
}

TEST_F(StepEngineTest, ARuleAnswersEveryDeliveryAfterItsDelayToTheNanosecond)
{
    StepEngine& engine = Build(P2p("8Mbps", "2ms"), 2);
    Configure(engine, {Flow(0, 9000, 0, 1), Flow(1, 9001, 1, 0)});
    auto installed =
        engine.SetRules(wire::Rules{{Rule(300 * kUs, 40, UINT64_MAX, false, 30 * kMs)}});
    ASSERT_TRUE(std::holds_alternative<wire::RulesInstalled>(installed));
    EXPECT_EQ(std::get<wire::RulesInstalled>(installed).count, 1u);
    // Measurements at 1, 11, 21 and 31 ms; the last arrives after lastTrigger.
    std::vector<SendRequest> sends;
    for (uint64_t n = 0; n < 4; ++n)
    {
        sends.push_back(Send(0, 7 + n, (1 + 10 * n) * kMs, 64));
    }
    wire::StepDone done = Run(engine, StepTo(50 * kMs, sends));
    std::vector<Delivery> answers;
    for (const Delivery& d : done.deliveries)
    {
        if (d.flow == 1)
        {
            answers.push_back(d);
        }
    }
    ASSERT_EQ(answers.size(), 3u);
    for (uint64_t n = 0; n < 3; ++n)
    {
        SCOPED_TRACE(n);
        const uint64_t arrival = (1 + 10 * n) * kMs + 2 * kMs + TxNs(64, 8000000);
        EXPECT_EQ(answers[n].number, n) << "numbered from 0 per rule";
        EXPECT_EQ(answers[n].sent, arrival + 300 * kUs);
        EXPECT_EQ(answers[n].received, arrival + 300 * kUs + 2 * kMs + TxNs(40, 8000000));
        EXPECT_EQ(answers[n].size, 40u);
        EXPECT_EQ(answers[n].stateCount, 1u);
    }
    EXPECT_EQ(engine.Finish().flows[1].sent, 3u);
}

TEST_F(StepEngineTest, ARuleSkipsWhatTheReceiversPoliciesRefuse)
{
    const uint64_t tx = TxNs(64, 8000000);
    StepEngine& engine = Build(P2p("8Mbps", "2ms"), 2);
    Configure(engine, {Flow(0, 9000, 0, 1), Flow(1, 9001, 1, 0)});
    // At most the delay of a packet that does not queue.
    auto installed = engine.SetRules(wire::Rules{{Rule(0, 40, 2 * kMs + tx, true, 1000 * kMs)}});
    ASSERT_TRUE(std::holds_alternative<wire::RulesInstalled>(installed));
    wire::StepDone done = Run(engine,
                              StepTo(100 * kMs,
                                     {
                                         Send(0, 5, 1 * kMs, 64),  // answered: 0
                                         Send(0, 6, 1 * kMs, 64),  // queues behind 5: too late
                                         Send(0, 4, 20 * kMs, 64), // not above 5: stale
                                         Send(0, 9, 40 * kMs, 64), // answered: 1
                                     }));
    std::vector<Delivery> answers;
    for (const Delivery& d : done.deliveries)
    {
        if (d.flow == 1)
        {
            answers.push_back(d);
        }
    }
    ASSERT_EQ(answers.size(), 2u);
    EXPECT_EQ(answers[0].number, 0u);
    EXPECT_EQ(answers[0].sent, 1 * kMs + 2 * kMs + tx);
    EXPECT_EQ(answers[1].number, 1u);
    EXPECT_EQ(answers[1].sent, 40 * kMs + 2 * kMs + tx);
}

TEST_F(StepEngineTest, RulesAreCheckedAndComeOnceBeforeTheFirstStep)
{
    StepEngine& engine = Build(P2p("8Mbps", "2ms"), 3);
    auto early = engine.SetRules(wire::Rules{});
    ASSERT_TRUE(std::holds_alternative<wire::Error>(early));
    EXPECT_EQ(std::get<wire::Error>(early).code, ErrorCode::UnexpectedMessage);
    Configure(engine, {Flow(0, 9000, 0, 1), Flow(1, 9001, 1, 0), Flow(2, 9002, 2, 0)});
    auto invalid = [&engine](wire::AnswerRule rule, const std::string& needle) {
        auto r = engine.SetRules(wire::Rules{{rule}});
        ASSERT_TRUE(std::holds_alternative<wire::Error>(r)) << needle;
        const wire::Error& e = std::get<wire::Error>(r);
        EXPECT_EQ(e.code, ErrorCode::InvalidConfig);
        EXPECT_NE(e.message.find(needle), std::string::npos) << e.message;
    };
    wire::AnswerRule rule = Rule(0, 40, UINT64_MAX, false, kMs);
    rule.answerFlow = 7;
    invalid(rule, "does not exist");
    rule.answerFlow = 2; // leaves node 2, but flow 0 reaches node 1
    invalid(rule, "not the node the trigger flow reaches");
    rule = Rule(0, 40, UINT64_MAX, false, kMs);
    rule.stateCount = 0;
    invalid(rule, "at least 1 packet");
    rule = Rule(0, 0, UINT64_MAX, false, kMs);
    invalid(rule, "0 payload bytes");
    rule = Rule(0, 70000, UINT64_MAX, false, kMs);
    invalid(rule, "70000 payload bytes");
    {
        auto r = engine.SetRules(wire::Rules{
            {Rule(0, 40, UINT64_MAX, false, kMs), Rule(0, 40, UINT64_MAX, false, kMs)}});
        ASSERT_TRUE(std::holds_alternative<wire::Error>(r));
        EXPECT_NE(std::get<wire::Error>(r).message.find("one rule at most"), std::string::npos);
    }
    Run(engine, StepTo(kMs));
    auto late = engine.SetRules(wire::Rules{{Rule(0, 40, UINT64_MAX, false, kMs)}});
    ASSERT_TRUE(std::holds_alternative<wire::Error>(late));
    EXPECT_EQ(std::get<wire::Error>(late).code, ErrorCode::UnexpectedMessage);
}

} // namespace
