/*
 * The ns-3 event scheduler of a netloop run: it fixes the order of the events
 * that share one instant, so that a send happens at the same place among them
 * whenever the bridge announced it.
 */
#ifndef NETLOOP_INSTANT_ORDER_SCHEDULER_H
#define NETLOOP_INSTANT_ORDER_SCHEDULER_H

#include "ns3/scheduler.h"

#include <cstdint>
#include <map>
#include <tuple>

namespace netloop
{

/**
 * \brief Where an event stands among the events of its instant.
 *
 * ns-3 runs events of equal time in the order they were scheduled. For a
 * control packet that order depends on when the bridge announced the send: a
 * send announced long before (lookahead, standalone) would run before the
 * network's own events at its instant (e.g. an LTE subframe start, scheduled
 * 1 ms earlier), a send announced in the step that starts at its instant after
 * them (they ran in the previous step). The rank makes the order one rule:
 *
 *   the network's events at t (and every event they cause at t), then the
 *   answers the StepEngine's rules send at t, then the sends at t in the
 *   order announced, then the end of a step at t.
 *
 * A send's own consequences at t are network events, so they run before the
 * next send at t. This is the order the bridge can honour in every sync mode:
 * it learns what to send at t only after the network has reached t (with its
 * deliveries at t), like a control side that takes in arrivals at a boundary
 * before it samples and sends.
 *
 * A Send-ranked event must not run network code itself: ns-3 decides whether
 * an event at the current instant has run by comparing uids with the running
 * event's (EventId::IsRunning), which holds only while the events of an
 * instant run in uid order. So the StepEngine schedules a Send-ranked *gate*
 * that schedules the actual send anew, as a Network event with the newest
 * uid: every Network event of an instant then runs in uid order.
 */
enum class InstantRank : uint8_t
{
    Network = 0,  //!< every ns-3 event not scheduled under another rank
    Response = 1, //!< a rule's answers: deciding them, and their gates (StepEngine)
    Send = 2,     //!< the gate of a control packet's send (StepEngine)
    StepEnd = 3,  //!< the check that ends a step (StepEngine)
};

/**
 * \brief An ns-3 Scheduler ordering events by (time, rank, scheduling order).
 *
 * Events get their rank when they are inserted: Network unless a
 * ScopedInstantRank is alive. A std::map keyed like ns-3's MapScheduler, with
 * the rank between the time stamp and the uid.
 */
class InstantOrderScheduler : public ns3::Scheduler
{
  public:
    /// \return the TypeId
    static ns3::TypeId GetTypeId();
    InstantOrderScheduler() = default;
    ~InstantOrderScheduler() override = default;

    void Insert(const Event& ev) override;
    bool IsEmpty() const override;
    Event PeekNext() const override;
    Event RemoveNext() override;
    void Remove(const Event& ev) override;

    /// Makes the simulator use this scheduler (moving the events already scheduled).
    static void Install();

  private:
    friend class ScopedInstantRank;
    /// Time stamp, rank, uid: the sort key.
    using Key = std::tuple<uint64_t, uint8_t, uint32_t>;

    /// The event stored under a key.
    struct Stored
    {
        ns3::EventImpl* impl; //!< the event
        uint32_t context;     //!< its context
    };

    std::map<Key, Stored> m_events; //!< every pending event
    static InstantRank s_rank;      //!< the rank of the events inserted now
};

/**
 * \brief Gives the events scheduled during its lifetime a rank (see InstantRank).
 *
 *     { ScopedInstantRank send(InstantRank::Send); Simulator::Schedule(...); }
 */
class ScopedInstantRank
{
  public:
    /// \param rank the rank of the events scheduled until destruction
    explicit ScopedInstantRank(InstantRank rank);
    ~ScopedInstantRank();
    ScopedInstantRank(const ScopedInstantRank&) = delete;
    ScopedInstantRank& operator=(const ScopedInstantRank&) = delete;

  private:
    InstantRank m_previous; //!< restored on destruction
};

} // namespace netloop

#endif // NETLOOP_INSTANT_ORDER_SCHEDULER_H
