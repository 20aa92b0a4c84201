/*
 * The four netloop packet tags and the ControlTag byte tag: exact round trips through ns-3's tag
 * machinery, sizes, TypeIds and printing, and survival through packet copies
 * and fragments, and (ControlTag) through segmentation and concatenation.
 */
#include "netloop-tags.h"

#include "ns3/packet.h"
#include "ns3/udp-header.h"

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

namespace
{

/// A ControlTag with these values.
ControlTag
Identity(uint64_t serial, uint64_t number)
{
    ControlTag tag;
    tag.serial = serial;
    tag.flow = 3;
    tag.number = number;
    tag.port = 9000;
    tag.stateIndex = 1;
    tag.stateCount = 2;
    tag.sentNs = 1000 * number;
    return tag;
}

/// A control packet as ControlApp builds it: payload, ControlTag, packet tags.
ns3::Ptr<ns3::Packet>
ControlPacketOf(uint32_t size, uint64_t serial, uint64_t number)
{
    ns3::Ptr<ns3::Packet> p = ns3::Create<ns3::Packet>(size);
    p->AddByteTag(Identity(serial, number));
    p->AddPacketTag(PacketNumTag(number));
    return p;
}

std::vector<uint64_t>
Serials(const ns3::Ptr<ns3::Packet>& p)
{
    std::vector<uint64_t> serials;
    for (const ControlTag& t : ControlTagsOf(*p))
    {
        serials.push_back(t.serial);
    }
    return serials;
}

} // namespace

TEST(Tags, ControlTagRoundTripsAndPrints)
{
    ControlTag in = Identity(std::numeric_limits<uint64_t>::max(), 77);
    ControlTag out;
    RoundTripThroughTagBuffer(in, out);
    EXPECT_EQ(out.serial, in.serial);
    EXPECT_EQ(out.flow, 3u);
    EXPECT_EQ(out.number, 77u);
    EXPECT_EQ(out.port, 9000u);
    EXPECT_EQ(out.stateIndex, 1u);
    EXPECT_EQ(out.stateCount, 2u);
    EXPECT_EQ(out.sentNs, 77000u);
    EXPECT_EQ(ControlTag::GetTypeId().GetName(), "netloop::ControlTag");
    std::ostringstream os;
    Identity(5, 2).Print(os);
    EXPECT_EQ(os.str(), "serial=5 flow=3 number=2 port=9000 state=1/2 sent=2000ns");
}

/**
 * What LTE RLC UM does to SDUs, with ns-3's Packet operations: packet A is
 * segmented over two PDUs, the second PDU concatenates A's tail and packet B,
 * headers are added and removed, and the receiver rebuilds A and B from the
 * PDUs' fragments. The rebuilt B is a fragment of a PDU that began with A's
 * bytes, so it carries A's packet tags and uid; its ControlTag still names B.
 */
TEST(Tags, ControlTagSurvivesSegmentationAndConcatenation)
{
    ns3::Ptr<ns3::Packet> a = ControlPacketOf(100, 11, 1);
    ns3::Ptr<ns3::Packet> b = ControlPacketOf(60, 12, 2);

    // Transmitter: PDU 1 = A[0, 40); PDU 2 = A[40, 100) + B; each with a header.
    ns3::Ptr<ns3::Packet> pdu1 = a->CreateFragment(0, 40);
    ns3::Ptr<ns3::Packet> pdu2 = a->CreateFragment(40, 60);
    pdu2->AddAtEnd(b);
    ns3::UdpHeader header;
    pdu1->AddHeader(header);
    pdu2->AddHeader(header);
    EXPECT_EQ(Serials(pdu1), (std::vector<uint64_t>{11}));
    EXPECT_EQ(Serials(pdu2), (std::vector<uint64_t>{11, 12})) << "a PDU drop loses both";

    // Receiver: strip the headers, rebuild A from both PDUs and B from PDU 2's tail.
    pdu1->RemoveHeader(header);
    pdu2->RemoveHeader(header);
    ns3::Ptr<ns3::Packet> rebuiltA = pdu1->Copy();
    rebuiltA->AddAtEnd(pdu2->CreateFragment(0, 60));
    ns3::Ptr<ns3::Packet> rebuiltB = pdu2->CreateFragment(60, 60);
    ASSERT_EQ(rebuiltA->GetSize(), 100u);
    ASSERT_EQ(rebuiltB->GetSize(), 60u);

    EXPECT_EQ(Serials(rebuiltA), (std::vector<uint64_t>{11})) << "two pieces, one packet";
    EXPECT_EQ(Serials(rebuiltB), (std::vector<uint64_t>{12}));
    const std::vector<ControlTag> tagsB = ControlTagsOf(*rebuiltB);
    EXPECT_EQ(tagsB[0].number, 2u);
    EXPECT_EQ(tagsB[0].sentNs, 2000u);

    // Why a packet tag (or the uid) cannot identify it: B came back as A.
    PacketNumTag num;
    ASSERT_TRUE(rebuiltB->PeekPacketTag(num));
    EXPECT_EQ(num.GetNumber(), 1u);
    EXPECT_EQ(rebuiltB->GetUid(), a->GetUid());
}
