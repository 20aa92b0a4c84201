/*
 * Properties of the C++ wire codec beyond the golden vectors: seeded random
 * round trips (whole and split at random points), prefixes are Incomplete and
 * never errors, random payloads never crash and re-encode canonically, bounds
 * and UTF-8 checks, and the duration parser shared with the Rust side.
 */
#include "golden_util.h"
#include "wire.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

using namespace netloop::wire;

namespace
{

/// Random messages of every kind from a seeded generator.
class MessageGenerator
{
  public:
    explicit MessageGenerator(uint64_t seed)
        : m_rng(seed)
    {
    }

    Message Next()
    {
        switch (Uniform(0, 7))
        {
        case 0:
            return Hello{U16(), Text()};
        case 1: {
            Configure m;
            for (uint64_t i = 0, n = Uniform(0, 5); i < n; ++i)
            {
                m.flows.push_back(FlowSpec{U32(),
                                           U16(),
                                           U32(),
                                           U32(),
                                           static_cast<Transport>(Uniform(0, 1)),
                                           Uniform(0, 1) == 1});
            }
            return m;
        }
        case 2:
            return Configured{U32(), Text()};
        case 3: {
            Step m;
            m.until = U64();
            m.stopAtDelivery = Uniform(0, 1) == 1;
            for (uint64_t i = 0, n = Uniform(0, 5); i < n; ++i)
            {
                m.sends.push_back(SendRequest{U32(), U64(), U16(), U16(), U64(), U32()});
            }
            for (uint64_t i = 0, n = Uniform(0, 3); i < n; ++i)
            {
                m.kinematics.push_back(
                    NodeKinematics{U32(), {F64(), F64(), F64()}, {F64(), F64(), F64()}});
            }
            return m;
        }
        case 4: {
            StepDone m;
            m.reached = U64();
            for (uint64_t i = 0, n = Uniform(0, 5); i < n; ++i)
            {
                m.deliveries.push_back(Delivery{U32(), U64(), U16(), U16(), U64(), U64(), U32()});
            }
            for (uint64_t i = 0, n = Uniform(0, 5); i < n; ++i)
            {
                m.drops.push_back(DropEvent{U32(),
                                            U64(),
                                            U16(),
                                            U16(),
                                            U64(),
                                            U64(),
                                            U32(),
                                            static_cast<DropReason>(Uniform(0, 4))});
            }
            return m;
        }
        case 5:
            return Finish{};
        case 6: {
            Summary m;
            m.reached = U64();
            for (uint64_t i = 0, n = Uniform(0, 5); i < n; ++i)
            {
                m.flows.push_back(FlowCounters{U32(), U64(), U64(), U64()});
            }
            return m;
        }
        default:
            return Error{static_cast<ErrorCode>(Uniform(0, 5)), Text()};
        }
    }

    uint64_t Uniform(uint64_t lo, uint64_t hi)
    {
        return std::uniform_int_distribution<uint64_t>(lo, hi)(m_rng);
    }

  private:
    uint64_t U64()
    {
        // Mix extremes in: they are where encoders go wrong.
        switch (Uniform(0, 3))
        {
        case 0:
            return 0;
        case 1:
            return ~uint64_t(0);
        default:
            return m_rng();
        }
    }

    uint32_t U32()
    {
        return static_cast<uint32_t>(U64());
    }

    uint16_t U16()
    {
        return static_cast<uint16_t>(U64());
    }

    double F64()
    {
        // Any bit pattern: NaNs and infinities must survive the codec too.
        const uint64_t bits = m_rng();
        double v;
        std::memcpy(&v, &bits, sizeof(v));
        return v;
    }

    std::string Text()
    {
        static const std::vector<std::string> pieces =
            {"a", "netloop", " ", "\xC2\xB5", "\xE2\x82\xAC", "\xF0\x9F\x9A\x97", "ns-3.37", ""};
        std::string s;
        for (uint64_t i = 0, n = Uniform(0, 6); i < n; ++i)
        {
            s += pieces[Uniform(0, pieces.size() - 1)];
        }
        return s;
    }

    std::mt19937_64 m_rng;
};

TEST(WireCodec, RandomMessagesRoundTrip)
{
    MessageGenerator gen(20240601);
    for (int i = 0; i < 2000; ++i)
    {
        const Message m = gen.Next();
        const std::vector<uint8_t> bytes = Encode(m);
        DecodeResult r = Decode(bytes.data(), bytes.size());
        ASSERT_EQ(r.status, DecodeResult::Status::Frame) << i << ": " << r.error.message;
        ASSERT_EQ(r.consumed, bytes.size());
        ASSERT_TRUE(r.message == m) << "case " << i << " kind " << ToString(KindOf(m));
    }
}

TEST(WireCodec, StreamSplitAtRandomPointsYieldsEveryFrameInOrder)
{
    MessageGenerator gen(7);
    std::vector<Message> sent;
    std::vector<uint8_t> stream;
    for (int i = 0; i < 200; ++i)
    {
        sent.push_back(gen.Next());
        std::string error;
        ASSERT_TRUE(EncodeInto(sent.back(), stream, kMaxPayload, &error)) << error;
    }
    FrameReader reader;
    std::vector<Message> received;
    std::size_t at = 0;
    while (at < stream.size())
    {
        const std::size_t chunk = std::min<std::size_t>(gen.Uniform(1, 97), stream.size() - at);
        reader.Append(stream.data() + at, chunk);
        at += chunk;
        for (;;)
        {
            DecodeResult r = reader.Next();
            ASSERT_NE(r.status, DecodeResult::Status::Error) << r.error.message;
            if (r.status == DecodeResult::Status::Incomplete)
            {
                break;
            }
            received.push_back(r.message);
        }
    }
    EXPECT_EQ(reader.Buffered(), 0u);
    ASSERT_EQ(received.size(), sent.size());
    for (std::size_t i = 0; i < sent.size(); ++i)
    {
        EXPECT_TRUE(received[i] == sent[i]) << i;
    }
}

TEST(WireCodec, EveryStrictPrefixIsIncompleteWithTheRightNeed)
{
    MessageGenerator gen(11);
    for (int i = 0; i < 100; ++i)
    {
        const std::vector<uint8_t> bytes = Encode(gen.Next());
        for (std::size_t n = 0; n < bytes.size(); ++n)
        {
            DecodeResult r = Decode(bytes.data(), n);
            ASSERT_EQ(r.status, DecodeResult::Status::Incomplete) << "prefix " << n;
            ASSERT_EQ(r.needed, n < kHeaderLength ? kHeaderLength : bytes.size());
        }
    }
}

TEST(WireCodec, CorruptedPayloadsNeverCrashAndDecodedOnesReencodeIdentically)
{
    // Valid frames with a few payload bytes overwritten, cut short or extended,
    // the header's length patched to match: the decoder must classify every one
    // as a payload error, or decode it to a value that re-encodes to the same bytes.
    MessageGenerator gen(99);
    std::mt19937_64 rng(99);
    int decoded = 0;
    int failed = 0;
    for (int i = 0; i < 20000; ++i)
    {
        std::vector<uint8_t> frame = Encode(gen.Next());
        for (uint64_t k = 0, n = rng() % 4; k < n && frame.size() > kHeaderLength; ++k)
        {
            const std::size_t at = kHeaderLength + rng() % (frame.size() - kHeaderLength);
            frame[at] = static_cast<uint8_t>(rng() % 3 == 0 ? rng() : rng() % 3);
        }
        switch (rng() % 4)
        {
        case 0:
            frame.resize(kHeaderLength + rng() % (frame.size() - kHeaderLength + 1));
            break;
        case 1:
            frame.push_back(static_cast<uint8_t>(rng()));
            break;
        default:
            break;
        }
        const uint32_t length = static_cast<uint32_t>(frame.size() - kHeaderLength);
        for (int k = 0; k < 4; ++k)
        {
            frame[8 + k] = static_cast<uint8_t>(length >> (8 * k));
        }
        DecodeResult r = Decode(frame.data(), frame.size());
        if (r.status == DecodeResult::Status::Frame)
        {
            ++decoded;
            ASSERT_EQ(r.consumed, frame.size());
            ASSERT_EQ(Encode(r.message), frame) << "non-canonical decode of case " << i;
        }
        else
        {
            ++failed;
            ASSERT_EQ(r.status, DecodeResult::Status::Error);
            const auto c = r.error.errorClass;
            ASSERT_TRUE(c == WireErrorClass::TruncatedPayload ||
                        c == WireErrorClass::MalformedPayload || c == WireErrorClass::TrailingBytes)
                << ToString(c);
        }
    }
    // Both outcomes must be exercised, or the test proves nothing.
    EXPECT_GT(decoded, 1000);
    EXPECT_GT(failed, 1000);
}

/// A frame with a given kind and payload.
std::vector<uint8_t>
Frame(MessageKind kind, const std::vector<uint8_t>& payload)
{
    std::vector<uint8_t> f = {'N', 'T', 'L', 'P', 1, 0, static_cast<uint8_t>(kind), 0};
    const uint32_t n = static_cast<uint32_t>(payload.size());
    for (int k = 0; k < 4; ++k)
    {
        f.push_back(static_cast<uint8_t>(n >> (8 * k)));
    }
    f.insert(f.end(), payload.begin(), payload.end());
    return f;
}

void
PushU64(std::vector<uint8_t>& v, uint64_t x)
{
    for (int k = 0; k < 8; ++k)
    {
        v.push_back(static_cast<uint8_t>(x >> (8 * k)));
    }
}

TEST(WireCodec, HugeLengthPrefixesAreTruncatedNotAllocated)
{
    // A Configure claiming 2^62 flows, and a Hello whose string claims 2^63 bytes.
    std::vector<uint8_t> configure;
    PushU64(configure, uint64_t(1) << 62);
    auto f = Frame(MessageKind::Configure, configure);
    DecodeResult r = Decode(f.data(), f.size());
    ASSERT_EQ(r.status, DecodeResult::Status::Error);
    EXPECT_EQ(r.error.errorClass, WireErrorClass::TruncatedPayload);

    std::vector<uint8_t> hello = {1, 0};
    PushU64(hello, uint64_t(1) << 63);
    f = Frame(MessageKind::Hello, hello);
    r = Decode(f.data(), f.size());
    ASSERT_EQ(r.status, DecodeResult::Status::Error);
    EXPECT_EQ(r.error.errorClass, WireErrorClass::TruncatedPayload);
}

TEST(WireCodec, InvalidUtf8IsMalformed)
{
    const std::vector<std::string> bad = {
        "\xC0\xAF",         // overlong '/'
        "\xED\xA0\x80",     // surrogate
        "\xF4\x90\x80\x80", // above U+10FFFF
        "\x80",             // lone continuation
        "\xE2\x82",         // cut short
        "\xFF",
    };
    for (const std::string& s : bad)
    {
        EXPECT_FALSE(IsValidUtf8(s));
        std::vector<uint8_t> payload = {1, 0};
        PushU64(payload, s.size());
        payload.insert(payload.end(), s.begin(), s.end());
        auto f = Frame(MessageKind::Hello, payload);
        DecodeResult r = Decode(f.data(), f.size());
        ASSERT_EQ(r.status, DecodeResult::Status::Error);
        EXPECT_EQ(r.error.errorClass, WireErrorClass::MalformedPayload) << r.error.message;

        std::vector<uint8_t> out;
        std::string error;
        EXPECT_FALSE(EncodeInto(Hello{1, s}, out, kMaxPayload, &error));
        EXPECT_TRUE(out.empty());
        EXPECT_NE(error.find("UTF-8"), std::string::npos);
    }
    EXPECT_TRUE(IsValidUtf8("plain \xC2\xB5 \xE2\x82\xAC \xF0\x9F\x9A\x97"));
}

TEST(WireCodec, EnumIndicesOutOfRangeAreMalformed)
{
    // Error with code 6 (ErrorCode has 6 variants) and DropReason 5 in a StepDone.
    std::vector<uint8_t> error = {6, 0, 0, 0};
    PushU64(error, 0);
    auto f = Frame(MessageKind::Error, error);
    DecodeResult r = Decode(f.data(), f.size());
    ASSERT_EQ(r.status, DecodeResult::Status::Error);
    EXPECT_EQ(r.error.errorClass, WireErrorClass::MalformedPayload);

    StepDone done;
    done.drops.push_back(DropEvent{});
    std::vector<uint8_t> bytes = Encode(done);
    bytes[bytes.size() - 4] = 5;
    r = Decode(bytes.data(), bytes.size());
    ASSERT_EQ(r.status, DecodeResult::Status::Error);
    EXPECT_EQ(r.error.errorClass, WireErrorClass::MalformedPayload);
    bytes[bytes.size() - 4] = 4; // Other: valid
    r = Decode(bytes.data(), bytes.size());
    EXPECT_EQ(r.status, DecodeResult::Status::Frame);
}

TEST(WireCodec, EncoderRefusesOversizedMessagesAndLeavesTheBufferAlone)
{
    std::vector<uint8_t> out = {42};
    std::string error;
    Configured big{1, std::string(kMaxPayload, 'x')};
    EXPECT_FALSE(EncodeInto(big, out, kMaxPayload, &error));
    EXPECT_EQ(out, std::vector<uint8_t>{42});
    EXPECT_NE(error.find("exceeds the frame limit"), std::string::npos) << error;
    // A lower limit is honoured, a higher one clamped.
    EXPECT_FALSE(EncodeInto(Hello{1, std::string(100, 'a')}, out, 50, &error));
    EXPECT_TRUE(EncodeInto(Hello{1, std::string(100, 'a')}, out, 200, &error));
}

TEST(WireCodec, DecoderHonoursALowerPayloadLimit)
{
    const std::vector<uint8_t> bytes = Encode(Hello{1, std::string(100, 'a')});
    DecodeResult r = Decode(bytes.data(), kHeaderLength, 50);
    ASSERT_EQ(r.status, DecodeResult::Status::Error);
    EXPECT_EQ(r.error.errorClass, WireErrorClass::Oversized);
    EXPECT_NE(r.error.message.find("Hello frame of 110 bytes"), std::string::npos)
        << r.error.message;
    r = Decode(bytes.data(), bytes.size(), 110);
    EXPECT_EQ(r.status, DecodeResult::Status::Frame);
}

TEST(WireCodec, ParsesDurationsExactlyLikeTheRustSide)
{
    const std::vector<std::pair<std::string, uint64_t>> cases = {
        {"10ms", 10000000},
        {"1.5s", 1500000000},
        {"250us", 250000},
        {"250\xC2\xB5s", 250000},
        {"3.7 ms", 3700000},
        {"100ns", 100},
        {"2min", 120000000000ULL},
        {"1h", 3600000000000ULL},
        {".5ms", 500000},
        {"0", 0},
        {"0.000000001s", 1},
        {" 60s ", 60000000000ULL},
        {"18446744073709551615ns", 18446744073709551615ULL},
    };
    for (const auto& [text, ns] : cases)
    {
        uint64_t value = 12345;
        std::string error;
        EXPECT_TRUE(ParseDuration(text, &value, &error)) << text << ": " << error;
        EXPECT_EQ(value, ns) << text;
    }
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"", "empty"},
        {"10", "missing unit"},
        {"-1ms", "not a non-negative decimal"},
        {"1.2.3ms", "not a non-negative decimal"},
        {"ms", "not a non-negative decimal"},
        {"10 parsecs", "not a non-negative decimal"},
        {"0.5ns", "whole number of nanoseconds"},
        {"0.1234567890123456789s", "whole number of nanoseconds"},
        {"99999999999h", "too long"},
        {"18446744073709551616ns", "too long"},
    };
    for (const auto& [text, why] : bad)
    {
        uint64_t value = 0;
        std::string error;
        EXPECT_FALSE(ParseDuration(text, &value, &error)) << text;
        EXPECT_NE(error.find(why), std::string::npos) << text << ": " << error;
    }
}

/// The error class of a ParseDuration message, as protocol/time/golden/durations.txt
/// names them (the Rust side names ParseTimeError's variants the same way).
std::string
DurationErrorClass(const std::string& message)
{
    const std::pair<const char*, const char*> classes[] = {
        {"empty duration", "empty"},
        {"missing unit", "missing_unit"},
        {"is not a non-negative decimal number", "invalid"},
        {"is not a whole number of nanoseconds", "sub_nanosecond"},
        {"is too long to represent", "overflow"},
    };
    for (const auto& [needle, name] : classes)
    {
        if (message.find(needle) != std::string::npos)
        {
            return name;
        }
    }
    return "unclassified: " + message;
}

// The table the Rust parser is held to as well (protocol/time/tests/golden.rs).
TEST(WireCodec, ParsesEveryDurationOfTheGoldenTableLikeTheRustSide)
{
    const auto cases =
        netloop::test::ReadDurationTable(std::string(NETLOOP_TIME_GOLDEN_DIR) + "/durations.txt");
    ASSERT_GT(cases.size(), 50U);
    for (const auto& c : cases)
    {
        uint64_t value = 0;
        std::string error;
        const bool ok = ParseDuration(c.input, &value, &error);
        const std::string got = ok ? std::to_string(value) : DurationErrorClass(error);
        EXPECT_EQ(got, c.expected) << "durations.txt line " << c.line << ": \"" << c.input << "\"";
    }
}

TEST(WireCodec, FormatsTimesLikeTheRustSideAndRoundTrips)
{
    EXPECT_EQ(FormatTime(0), "0s");
    EXPECT_EQ(FormatTime(3700000), "3700us");
    EXPECT_EQ(FormatTime(10000000), "10ms");
    EXPECT_EQ(FormatTime(1500000000), "1500ms");
    EXPECT_EQ(FormatTime(7), "7ns");
    for (uint64_t ns :
         {0ULL, 1ULL, 999ULL, 1000ULL, 3700000ULL, 1500000000ULL, 10000000000ULL, 123456789ULL})
    {
        uint64_t back = 1;
        std::string error;
        ASSERT_TRUE(ParseDuration(FormatTime(ns), &back, &error)) << error;
        EXPECT_EQ(back, ns);
    }
}

} // namespace

// Found by wire_decoder_fuzz (UBSan): an empty buffer, as an empty FrameReader
// holds (a null data pointer), was compared with memcmp, which is undefined for
// a null pointer even over 0 bytes. Only a sanitizer build sees the difference
// (scripts/fuzz.sh); here it pins the answer: incomplete, a header needed.
TEST(WireCodec, AnEmptyBufferWithANullPointerIsIncomplete)
{
    DecodeResult r = Decode(nullptr, 0);
    EXPECT_EQ(r.status, DecodeResult::Status::Incomplete);
    EXPECT_EQ(r.needed, kHeaderLength);
    std::optional<FrameHeader> header;
    EXPECT_FALSE(DecodeHeader(nullptr, 0, kMaxPayload, &header).has_value());
    EXPECT_FALSE(header.has_value());
    FrameReader reader;
    EXPECT_EQ(reader.Next().status, DecodeResult::Status::Incomplete);
}
