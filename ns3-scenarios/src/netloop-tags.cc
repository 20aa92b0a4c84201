#include "netloop-tags.h"

#include "ns3/uinteger.h"

namespace netloop
{

using ns3::TagBuffer;
using ns3::TypeId;

NS_OBJECT_ENSURE_REGISTERED(PacketNumTag);
NS_OBJECT_ENSURE_REGISTERED(PacketPortTag);
NS_OBJECT_ENSURE_REGISTERED(StateNumTag);
NS_OBJECT_ENSURE_REGISTERED(SendTimeTag);
NS_OBJECT_ENSURE_REGISTERED(ControlTag);

// --- PacketNumTag ---

PacketNumTag::PacketNumTag()
    : m_number(0)
{
}

PacketNumTag::PacketNumTag(uint64_t number)
    : m_number(number)
{
}

TypeId
PacketNumTag::GetTypeId()
{
    static TypeId tid = TypeId("netloop::PacketNumTag")
                            .SetParent<ns3::Tag>()
                            .SetGroupName("Netloop")
                            .AddConstructor<PacketNumTag>()
                            .AddAttribute("Number",
                                          "Per-flow sequence number of the control packet",
                                          ns3::EmptyAttributeValue(),
                                          ns3::MakeUintegerAccessor(&PacketNumTag::GetNumber),
                                          ns3::MakeUintegerChecker<uint64_t>());
    return tid;
}

void
PacketNumTag::Print(std::ostream& os) const
{
    os << "number=" << m_number;
}

void
PacketNumTag::SetNumber(uint64_t number)
{
    m_number = number;
}

uint64_t
PacketNumTag::GetNumber() const
{
    return m_number;
}

// --- PacketPortTag ---

PacketPortTag::PacketPortTag()
    : m_port(0)
{
}

PacketPortTag::PacketPortTag(uint16_t port)
    : m_port(port)
{
}

TypeId
PacketPortTag::GetTypeId()
{
    static TypeId tid = TypeId("netloop::PacketPortTag")
                            .SetParent<ns3::Tag>()
                            .SetGroupName("Netloop")
                            .AddConstructor<PacketPortTag>()
                            .AddAttribute("Port",
                                          "The flow's port: identifies loop and direction",
                                          ns3::EmptyAttributeValue(),
                                          ns3::MakeUintegerAccessor(&PacketPortTag::GetPort),
                                          ns3::MakeUintegerChecker<uint16_t>());
    return tid;
}

void
PacketPortTag::Print(std::ostream& os) const
{
    os << "port=" << m_port;
}

void
PacketPortTag::SetPort(uint16_t port)
{
    m_port = port;
}

uint16_t
PacketPortTag::GetPort() const
{
    return m_port;
}

// --- StateNumTag ---

StateNumTag::StateNumTag()
    : m_index(0),
      m_count(1)
{
}

StateNumTag::StateNumTag(uint16_t index, uint16_t count)
    : m_index(index),
      m_count(count)
{
}

TypeId
StateNumTag::GetTypeId()
{
    static TypeId tid = TypeId("netloop::StateNumTag")
                            .SetParent<ns3::Tag>()
                            .SetGroupName("Netloop")
                            .AddConstructor<StateNumTag>()
                            .AddAttribute("Index",
                                          "Index of the state this packet carries",
                                          ns3::EmptyAttributeValue(),
                                          ns3::MakeUintegerAccessor(&StateNumTag::GetIndex),
                                          ns3::MakeUintegerChecker<uint16_t>())
                            .AddAttribute("Count",
                                          "Number of packets the sample is split into",
                                          ns3::EmptyAttributeValue(),
                                          ns3::MakeUintegerAccessor(&StateNumTag::GetCount),
                                          ns3::MakeUintegerChecker<uint16_t>());
    return tid;
}

void
StateNumTag::Print(std::ostream& os) const
{
    os << "state=" << m_index << "/" << m_count;
}

void
StateNumTag::SetIndex(uint16_t index)
{
    m_index = index;
}

uint16_t
StateNumTag::GetIndex() const
{
    return m_index;
}

void
StateNumTag::SetCount(uint16_t count)
{
    m_count = count;
}

uint16_t
StateNumTag::GetCount() const
{
    return m_count;
}

// --- SendTimeTag ---

SendTimeTag::SendTimeTag()
    : m_ns(0)
{
}

SendTimeTag::SendTimeTag(uint64_t ns)
    : m_ns(ns)
{
}

TypeId
SendTimeTag::GetTypeId()
{
    static TypeId tid = TypeId("netloop::SendTimeTag")
                            .SetParent<ns3::Tag>()
                            .SetGroupName("Netloop")
                            .AddConstructor<SendTimeTag>()
                            .AddAttribute("NanoSeconds",
                                          "Send time requested by the bridge, in ns",
                                          ns3::EmptyAttributeValue(),
                                          ns3::MakeUintegerAccessor(&SendTimeTag::GetNanoSeconds),
                                          ns3::MakeUintegerChecker<uint64_t>());
    return tid;
}

void
SendTimeTag::Print(std::ostream& os) const
{
    os << "sent=" << m_ns << "ns";
}

void
SendTimeTag::SetNanoSeconds(uint64_t ns)
{
    m_ns = ns;
}

uint64_t
SendTimeTag::GetNanoSeconds() const
{
    return m_ns;
}

// --- ControlTag ---

TypeId
ControlTag::GetTypeId()
{
    static TypeId tid = TypeId("netloop::ControlTag")
                            .SetParent<ns3::Tag>()
                            .SetGroupName("Netloop")
                            .AddConstructor<ControlTag>();
    return tid;
}

void
ControlTag::Print(std::ostream& os) const
{
    os << "serial=" << serial << " flow=" << flow << " number=" << number << " port=" << port
       << " state=" << stateIndex << "/" << stateCount << " sent=" << sentNs << "ns";
}

std::vector<ControlTag>
ControlTagsOf(const ns3::Packet& packet)
{
    std::vector<ControlTag> tags;
    const TypeId tid = ControlTag::GetTypeId();
    ns3::ByteTagIterator it = packet.GetByteTagIterator();
    while (it.HasNext())
    {
        ns3::ByteTagIterator::Item item = it.Next();
        if (item.GetTypeId() != tid)
        {
            continue;
        }
        ControlTag tag;
        item.GetTag(tag);
        // Pieces of one packet rejoined (IP or RLC reassembly) are listed once each.
        bool seen = false;
        for (const ControlTag& t : tags)
        {
            seen = seen || t.serial == tag.serial;
        }
        if (!seen)
        {
            tags.push_back(tag);
        }
    }
    return tags;
}

} // namespace netloop
