/*
 * The four netloop packet tags: exact round trips through ns-3's tag
 * machinery, sizes, TypeIds and printing, and survival through packet copies
 * and fragments.
 */
#include "netloop-tags.h"

#include "ns3/packet.h"

#include <gtest/gtest.h>
#include <limits>
#include <sstream>
#include <vector>

using namespace netloop;

namespace
{

/// Serializes a tag into a buffer of exactly its size and reads it back into out.
template <typename T>
void
RoundTripThroughTagBuffer(const T& in, T& out)
{
    std::vector<uint8_t> storage(in.GetSerializedSize());
    in.Serialize(ns3::TagBuffer(storage.data(), storage.data() + storage.size()));
    out.Deserialize(ns3::TagBuffer(storage.data(), storage.data() + storage.size()));
}

TEST(Tags, RoundTripExtremesThroughTagBuffer)
{
    for (uint64_t v : {uint64_t(0), uint64_t(1), std::numeric_limits<uint64_t>::max()})
    {
        PacketNumTag num(v);
        PacketNumTag numOut;
        RoundTripThroughTagBuffer(num, numOut);
        EXPECT_EQ(numOut.GetNumber(), v);
        SendTimeTag sent(v);
        SendTimeTag sentOut;
        RoundTripThroughTagBuffer(sent, sentOut);
        EXPECT_EQ(sentOut.GetNanoSeconds(), v);
    }
    for (uint16_t v : {uint16_t(0), uint16_t(9000), std::numeric_limits<uint16_t>::max()})
    {
        PacketPortTag port(v);
        PacketPortTag portOut;
        RoundTripThroughTagBuffer(port, portOut);
        EXPECT_EQ(portOut.GetPort(), v);
        StateNumTag state(v, static_cast<uint16_t>(v ^ 0x5a5a));
        StateNumTag stateOut;
        RoundTripThroughTagBuffer(state, stateOut);
        EXPECT_EQ(stateOut.GetIndex(), v);
        EXPECT_EQ(stateOut.GetCount(), static_cast<uint16_t>(v ^ 0x5a5a));
    }
}

TEST(Tags, SizesTypeIdsAndPrinting)
{
    EXPECT_EQ(PacketNumTag().GetSerializedSize(), 8u);
    EXPECT_EQ(PacketPortTag().GetSerializedSize(), 2u);
    EXPECT_EQ(StateNumTag().GetSerializedSize(), 4u);
    EXPECT_EQ(SendTimeTag().GetSerializedSize(), 8u);
    EXPECT_EQ(PacketNumTag::GetTypeId().GetName(), "netloop::PacketNumTag");
    EXPECT_EQ(PacketPortTag::GetTypeId().GetName(), "netloop::PacketPortTag");
    EXPECT_EQ(StateNumTag::GetTypeId().GetName(), "netloop::StateNumTag");
    EXPECT_EQ(SendTimeTag::GetTypeId().GetName(), "netloop::SendTimeTag");
    EXPECT_EQ(PacketNumTag(3).GetInstanceTypeId(), PacketNumTag::GetTypeId());
    EXPECT_EQ(StateNumTag().GetCount(), 1u) << "a single-packet sample by default";

    std::ostringstream os;
    PacketNumTag(7).Print(os);
    os << " ";
    PacketPortTag(9000).Print(os);
    os << " ";
    StateNumTag(2, 4).Print(os);
    os << " ";
    SendTimeTag(1000000).Print(os);
    EXPECT_EQ(os.str(), "number=7 port=9000 state=2/4 sent=1000000ns");
}

TEST(Tags, TravelWithCopiesAndFragmentsAndCostNoBytes)
{
    ns3::Ptr<ns3::Packet> p = ns3::Create<ns3::Packet>(3000);
    p->AddPacketTag(PacketNumTag(42));
    p->AddPacketTag(PacketPortTag(9001));
    p->AddPacketTag(StateNumTag(1, 3));
    p->AddPacketTag(SendTimeTag(123456789));
    EXPECT_EQ(p->GetSize(), 3000u);

    for (ns3::Ptr<ns3::Packet> q : {p->Copy(), p->CreateFragment(1500, 1500)})
    {
        PacketNumTag num;
        PacketPortTag port;
        StateNumTag state;
        SendTimeTag sent;
        ASSERT_TRUE(q->PeekPacketTag(num));
        ASSERT_TRUE(q->PeekPacketTag(port));
        ASSERT_TRUE(q->PeekPacketTag(state));
        ASSERT_TRUE(q->PeekPacketTag(sent));
        EXPECT_EQ(num.GetNumber(), 42u);
        EXPECT_EQ(port.GetPort(), 9001u);
        EXPECT_EQ(state.GetIndex(), 1u);
        EXPECT_EQ(state.GetCount(), 3u);
        EXPECT_EQ(sent.GetNanoSeconds(), 123456789u);
        EXPECT_EQ(q->GetUid(), p->GetUid());
    }
}

} // namespace
