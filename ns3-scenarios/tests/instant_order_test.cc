/*
 * The InstantOrderScheduler: at one instant the network's events (with what
 * they schedule at that instant) run first, then the sends in the order they
 * were scheduled (each followed by what it causes), then a step's end,
 * whatever order the events were scheduled in; ns-3's EventId bookkeeping
 * stays right.
 */
#include "instant-order-scheduler.h"

#include "ns3/simulator.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace netloop;
using ns3::Simulator;

namespace
{

class InstantOrderTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        Simulator::Destroy();
        InstantOrderScheduler::Install();
    }

    void TearDown() override
    {
        Simulator::Destroy();
    }

    /// Schedules an event at t (ns) under a rank that appends its name when it runs.
    void At(uint64_t t, InstantRank rank, const std::string& name)
    {
        ScopedInstantRank scoped(rank);
        Simulator::Schedule(ns3::NanoSeconds(t), [this, name]() { m_order.push_back(name); });
    }

    std::vector<std::string> m_order;
};

} // namespace

TEST_F(InstantOrderTest, NetworkEventsThenSendsThenTheStepEndWhateverTheSchedulingOrder)
{
    At(5, InstantRank::StepEnd, "end");
    At(5, InstantRank::Send, "send 1");
    At(5, InstantRank::Send, "send 2");
    At(4, InstantRank::Send, "earlier send");
    {
        ScopedInstantRank send(InstantRank::Send);
        // A send that causes a network event at its instant: it runs before the next send.
        Simulator::Schedule(ns3::NanoSeconds(5), [this]() {
            m_order.push_back("send 3");
            Simulator::ScheduleNow([this]() { m_order.push_back("caused by send 3"); });
        });
    }
    At(5, InstantRank::Send, "send 4");
    // Network events scheduled last, one causing another at the same instant.
    Simulator::Schedule(ns3::NanoSeconds(5), [this]() {
        m_order.push_back("network");
        Simulator::ScheduleNow([this]() { m_order.push_back("caused by network"); });
    });
    At(6, InstantRank::Network, "later network");
    Simulator::Run();
    EXPECT_EQ(m_order,
              (std::vector<std::string>{"earlier send",
                                        "network",
                                        "caused by network",
                                        "send 1",
                                        "send 2",
                                        "send 3",
                                        "caused by send 3",
                                        "send 4",
                                        "end",
                                        "later network"}));
}

TEST_F(InstantOrderTest, RemoveFindsEventsOfEveryRankAndTheRankEndsWithItsScope)
{
    ns3::EventId send;
    ns3::EventId end;
    {
        ScopedInstantRank scoped(InstantRank::Send);
        send = Simulator::Schedule(ns3::NanoSeconds(5), [this]() { m_order.push_back("send"); });
        {
            ScopedInstantRank inner(InstantRank::StepEnd);
            end = Simulator::Schedule(ns3::NanoSeconds(5), [this]() { m_order.push_back("end"); });
        }
        At(5, InstantRank::Send, "other send");
    }
    // Back to Network outside the scopes: before the sends.
    Simulator::Schedule(ns3::NanoSeconds(5), [this]() { m_order.push_back("network"); });
    Simulator::Remove(send);
    Simulator::Remove(end);
    EXPECT_TRUE(send.IsExpired());
    Simulator::Run();
    EXPECT_EQ(m_order, (std::vector<std::string>{"network", "other send"}));
}
