#include "instant-order-scheduler.h"

#include "ns3/assert.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"

namespace netloop
{

NS_OBJECT_ENSURE_REGISTERED(InstantOrderScheduler);

InstantRank InstantOrderScheduler::s_rank = InstantRank::Network;

ns3::TypeId
InstantOrderScheduler::GetTypeId()
{
    static ns3::TypeId tid = ns3::TypeId("netloop::InstantOrderScheduler")
                                 .SetParent<ns3::Scheduler>()
                                 .SetGroupName("Netloop")
                                 .AddConstructor<InstantOrderScheduler>();
    return tid;
}

void
InstantOrderScheduler::Install()
{
    ns3::Simulator::SetScheduler(ns3::ObjectFactory("netloop::InstantOrderScheduler"));
}

void
InstantOrderScheduler::Insert(const Event& ev)
{
    const Key key{ev.key.m_ts, static_cast<uint8_t>(s_rank), ev.key.m_uid};
    m_events.emplace(key, Stored{ev.impl, ev.key.m_context});
}

bool
InstantOrderScheduler::IsEmpty() const
{
    return m_events.empty();
}

ns3::Scheduler::Event
InstantOrderScheduler::PeekNext() const
{
    NS_ASSERT(!m_events.empty());
    const auto& [key, stored] = *m_events.begin();
    Event ev;
    ev.impl = stored.impl;
    ev.key.m_ts = std::get<0>(key);
    ev.key.m_uid = std::get<2>(key);
    ev.key.m_context = stored.context;
    return ev;
}

ns3::Scheduler::Event
InstantOrderScheduler::RemoveNext()
{
    Event ev = PeekNext();
    m_events.erase(m_events.begin());
    return ev;
}

void
InstantOrderScheduler::Remove(const Event& ev)
{
    // Simulator::Remove knows time and uid, not the rank: look under each (rare).
    for (uint8_t rank = 0; rank <= static_cast<uint8_t>(InstantRank::StepEnd); ++rank)
    {
        if (m_events.erase(Key{ev.key.m_ts, rank, ev.key.m_uid}) > 0)
        {
            return;
        }
    }
    NS_ASSERT_MSG(false, "removing an event that is not scheduled");
}

ScopedInstantRank::ScopedInstantRank(InstantRank rank)
    : m_previous(InstantOrderScheduler::s_rank)
{
    InstantOrderScheduler::s_rank = rank;
}

ScopedInstantRank::~ScopedInstantRank()
{
    InstantOrderScheduler::s_rank = m_previous;
}

} // namespace netloop
