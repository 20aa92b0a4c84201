/*
 * The four packet tags every netloop control packet carries (docs/design.md §5.3),
 * written the way ns-3 writes tags (src/network/examples/main-packet-tag.cc):
 * GetTypeId, GetInstanceTypeId, GetSerializedSize, Serialize, Deserialize, Print.
 *
 * They are packet tags (Packet::AddPacketTag): they travel with the packet
 * and its copies and fragments, and cost no bytes on the simulated wire. A
 * packet tag belongs to a Packet object, not to its bytes, so a layer that
 * concatenates packets (LTE RLC puts several SDUs in one PDU and rebuilds
 * them from its fragments) hands the receiver packets carrying another
 * packet's packet tags. netloop therefore identifies a control packet by
 * ControlTag, a byte tag (Packet::AddByteTag) on its payload bytes, which
 * follows those bytes through segmentation, concatenation and reassembly (as
 * FlowMonitor's Ipv4FlowProbeTag does); the four packet tags stay for
 * scripts that read them.
 */
#ifndef NETLOOP_TAGS_H
#define NETLOOP_TAGS_H

#include "ns3/packet.h"
#include "ns3/tag.h"

#include <cstdint>
#include <ostream>
#include <tuple>
#include <vector>

namespace netloop
{

/**
 * \brief What every netloop tag shares: its instance TypeId is its class's,
 * and its bytes are its fields, in order, at their own widths.
 *
 * Derived lists its fields in `static auto Fields(Self& self)`, a std::tie of
 * uint16_t, uint32_t and uint64_t members (Self: Derived or const Derived).
 */
template <typename Derived>
class FieldTag : public ns3::Tag
{
  public:
    ns3::TypeId GetInstanceTypeId() const override
    {
        return Derived::GetTypeId();
    }

    uint32_t GetSerializedSize() const override
    {
        return std::apply(
            [](const auto&... field) { return static_cast<uint32_t>((0 + ... + sizeof(field))); },
            Derived::Fields(AsDerived()));
    }

    void Serialize(ns3::TagBuffer buffer) const override
    {
        std::apply([&buffer](const auto&... field) { (Write(buffer, field), ...); },
                   Derived::Fields(AsDerived()));
    }

    void Deserialize(ns3::TagBuffer buffer) override
    {
        std::apply([&buffer](auto&... field) { (Read(buffer, field), ...); },
                   Derived::Fields(static_cast<Derived&>(*this)));
    }

  private:
    const Derived& AsDerived() const
    {
        return static_cast<const Derived&>(*this);
    }

    static void Write(ns3::TagBuffer& buffer, uint16_t v)
    {
        buffer.WriteU16(v);
    }

    static void Write(ns3::TagBuffer& buffer, uint32_t v)
    {
        buffer.WriteU32(v);
    }

    static void Write(ns3::TagBuffer& buffer, uint64_t v)
    {
        buffer.WriteU64(v);
    }

    static void Read(ns3::TagBuffer& buffer, uint16_t& v)
    {
        v = buffer.ReadU16();
    }

    static void Read(ns3::TagBuffer& buffer, uint32_t& v)
    {
        v = buffer.ReadU32();
    }

    static void Read(ns3::TagBuffer& buffer, uint64_t& v)
    {
        v = buffer.ReadU64();
    }
};

/**
 * \brief Per-flow sequence number of a control packet.
 */
class PacketNumTag : public FieldTag<PacketNumTag>
{
  public:
    /// Number 0.
    PacketNumTag();
    /// \param number the packet number
    explicit PacketNumTag(uint64_t number);

    /// \return the TypeId
    static ns3::TypeId GetTypeId();
    void Print(std::ostream& os) const override;

    /// The serialized fields, in order (see FieldTag).
    template <typename Self>
    static auto Fields(Self& self)
    {
        return std::tie(self.m_number);
    }

    /// \param number the packet number
    void SetNumber(uint64_t number);
    /// \return the packet number
    uint64_t GetNumber() const;

  private:
    uint64_t m_number; //!< packet number
};

/**
 * \brief The flow's port: identifies the loop and the direction of a control packet.
 */
class PacketPortTag : public FieldTag<PacketPortTag>
{
  public:
    /// Port 0.
    PacketPortTag();
    /// \param port the flow's port
    explicit PacketPortTag(uint16_t port);

    /// \return the TypeId
    static ns3::TypeId GetTypeId();
    void Print(std::ostream& os) const override;

    /// The serialized fields, in order (see FieldTag).
    template <typename Self>
    static auto Fields(Self& self)
    {
        return std::tie(self.m_port);
    }

    /// \param port the flow's port
    void SetPort(uint16_t port);
    /// \return the flow's port
    uint16_t GetPort() const;

  private:
    uint16_t m_port; //!< flow port
};

/**
 * \brief Which part of a sample a packet carries: state index and state count.
 *
 * A sample of n values sent as n packets has count n and index 0..n-1; a
 * single-packet sample has index 0 and count 1.
 */
class StateNumTag : public FieldTag<StateNumTag>
{
  public:
    /// Index 0, count 1.
    StateNumTag();
    /// \param index state index
    /// \param count state count
    StateNumTag(uint16_t index, uint16_t count);

    /// \return the TypeId
    static ns3::TypeId GetTypeId();
    void Print(std::ostream& os) const override;

    /// The serialized fields, in order (see FieldTag).
    template <typename Self>
    static auto Fields(Self& self)
    {
        return std::tie(self.m_index, self.m_count);
    }

    /// \param index state index
    void SetIndex(uint16_t index);
    /// \return state index
    uint16_t GetIndex() const;
    /// \param count state count
    void SetCount(uint16_t count);
    /// \return state count
    uint16_t GetCount() const;

  private:
    uint16_t m_index; //!< state index
    uint16_t m_count; //!< state count
};

/**
 * \brief The send time the bridge asked for, in integer nanoseconds.
 */
class SendTimeTag : public FieldTag<SendTimeTag>
{
  public:
    /// Time 0.
    SendTimeTag();
    /// \param ns send time in nanoseconds
    explicit SendTimeTag(uint64_t ns);

    /// \return the TypeId
    static ns3::TypeId GetTypeId();
    void Print(std::ostream& os) const override;

    /// The serialized fields, in order (see FieldTag).
    template <typename Self>
    static auto Fields(Self& self)
    {
        return std::tie(self.m_ns);
    }

    /// \param ns send time in nanoseconds
    void SetNanoSeconds(uint64_t ns);
    /// \return send time in nanoseconds
    uint64_t GetNanoSeconds() const;

  private:
    uint64_t m_ns; //!< send time, ns
};

/**
 * \brief The identity of a UDP control packet, as a byte tag on its payload.
 *
 * Carries a serial number unique among the packets a StepEngine sent (the
 * key it tracks them by), the flow, and the values of the four packet tags.
 * A byte tag covers the payload bytes it was added to and follows them, so
 * whatever a layer does to packets (copy, fragment, concatenate, reassemble),
 * the bytes of each control packet still name it; a packet made of several
 * control packets' bytes names them all. Needs at least one payload byte.
 */
class ControlTag : public FieldTag<ControlTag>
{
  public:
    ControlTag() = default;

    /// \return the TypeId
    static ns3::TypeId GetTypeId();
    void Print(std::ostream& os) const override;

    /// The serialized fields, in order (see FieldTag).
    template <typename Self>
    static auto Fields(Self& self)
    {
        return std::tie(self.serial,
                        self.flow,
                        self.number,
                        self.port,
                        self.stateIndex,
                        self.stateCount,
                        self.sentNs);
    }

    uint64_t serial = 0;     //!< unique per sent packet (per StepEngine)
    uint32_t flow = 0;       //!< flow id
    uint64_t number = 0;     //!< as PacketNumTag
    uint16_t port = 0;       //!< as PacketPortTag
    uint16_t stateIndex = 0; //!< as StateNumTag
    uint16_t stateCount = 1; //!< as StateNumTag
    uint64_t sentNs = 0;     //!< as SendTimeTag
};

/**
 * The ControlTags on the bytes of a packet, one per control packet (several
 * pieces of the same packet count once), in the order ns-3 lists them.
 */
std::vector<ControlTag> ControlTagsOf(const ns3::Packet& packet);

} // namespace netloop

#endif // NETLOOP_TAGS_H
