/*
 * The C++ codec against protocol/golden/: the same values as
 * protocol/tests/golden.rs, built independently here, must encode to the
 * golden bytes; every golden frame must decode to those values and re-encode
 * byte for byte; every bad frame must give exactly its error class.
 */
#include "golden_util.h"
#include "wire.h"

#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace netloop;
using namespace netloop::wire;
using netloop::test::FromHex;
using netloop::test::ReadTable;
using netloop::test::ToHex;

namespace
{

const std::string kGoldenDir = NETLOOP_GOLDEN_DIR;

/// The valid cases, in the order of frames.txt.
std::vector<std::pair<std::string, Message>>
GoldenCases()
{
    std::vector<std::pair<std::string, Message>> cases;
    cases.emplace_back("hello", Hello{1, "netloop 0.1.0"});

    Configure configure;
    configure.flows.push_back(FlowSpec{0, 9000, 0, 1, Transport::Udp, true});
    configure.flows.push_back(FlowSpec{1, 9001, 1, 0, Transport::Tcp, false});
    cases.emplace_back("configure", configure);

    cases.emplace_back("configured", Configured{2, "p2p chain, 2 nodes, \xC2\xB5-test"});

    Step step;
    step.until = 10000000;
    step.stopAtDelivery = true;
    step.sends.push_back(SendRequest{0, 7, 0, 1, 1000000, 64});
    step.sends.push_back(SendRequest{1, std::numeric_limits<uint64_t>::max(), 3, 4, 9999999, 1500});
    step.kinematics.push_back(NodeKinematics{1, {1.5, -2.25, 0.0}, {30.0, 0.0, -0.125}});
    cases.emplace_back("step", step);

    StepDone done;
    done.reached = 4700000;
    done.deliveries.push_back(Delivery{0, 7, 0, 1, 1000000, 4700000, 64});
    done.drops.push_back(DropEvent{1, 8, 2, 4, 2000000, 2500123, 0, DropReason::Phy});
    cases.emplace_back("step_done", done);

    cases.emplace_back("finish", Finish{});

    Summary summary;
    summary.reached = 60000000000ULL;
    summary.flows.push_back(FlowCounters{0, 6000, 5990, 10});
    cases.emplace_back("summary", summary);

    cases.emplace_back("error", Error{ErrorCode::InvalidStep, "send at 1ms is before 2ms"});

    Rules rules;
    rules.rules.push_back(
        AnswerRule{0, 1, 250000, 32, 1, std::numeric_limits<uint64_t>::max(), false, 1999000000});
    rules.rules.push_back(
        AnswerRule{2, 3, 0, 1500, 4, 20000000, true, std::numeric_limits<uint64_t>::max() - 1});
    cases.emplace_back("rules", rules);
    cases.emplace_back("rules_installed", RulesInstalled{2});
    return cases;
}

TEST(WireGolden, EveryKindHasACase)
{
    auto cases = GoldenCases();
    for (uint16_t k = 1; k <= 10; ++k)
    {
        bool found = false;
        for (const auto& c : cases)
        {
            found = found || static_cast<uint16_t>(KindOf(c.second)) == k;
        }
        EXPECT_TRUE(found) << "no golden case for kind " << k;
    }
}

TEST(WireGolden, FramesMatchByteForByte)
{
    auto cases = GoldenCases();
    auto table = ReadTable(kGoldenDir + "/frames.txt", 2);
    ASSERT_EQ(table.size(), cases.size()) << "frames.txt and GoldenCases() disagree";
    for (std::size_t i = 0; i < cases.size(); ++i)
    {
        const auto& [name, expected] = cases[i];
        SCOPED_TRACE(name);
        ASSERT_EQ(table[i][0], name);
        const std::vector<uint8_t> golden = FromHex(table[i][1]);

        // Built here, encoded here: the golden bytes.
        EXPECT_EQ(ToHex(Encode(expected)), table[i][1]);

        // Decoded: the same value, the whole frame consumed.
        DecodeResult r = Decode(golden.data(), golden.size());
        ASSERT_EQ(r.status, DecodeResult::Status::Frame) << r.error.message;
        EXPECT_EQ(r.consumed, golden.size());
        EXPECT_EQ(KindOf(r.message), KindOf(expected));
        EXPECT_TRUE(r.message == expected);

        // Re-encoded from the decoded value: byte for byte.
        EXPECT_EQ(Encode(r.message), golden);
    }
}

TEST(WireGolden, BadFramesGiveTheirErrorClass)
{
    auto table = ReadTable(kGoldenDir + "/bad_frames.txt", 3);
    ASSERT_EQ(table.size(), 8u);
    for (const auto& row : table)
    {
        SCOPED_TRACE(row[0]);
        const std::vector<uint8_t> bytes = FromHex(row[2]);
        DecodeResult r = Decode(bytes.data(), bytes.size());
        ASSERT_EQ(r.status, DecodeResult::Status::Error);
        EXPECT_EQ(ToString(r.error.errorClass), row[1]) << r.error.message;
        EXPECT_FALSE(r.error.message.empty());
    }
}

TEST(WireGolden, BadFramesAreCaughtAsEarlyAsTheHeaderAllows)
{
    // Fed one byte at a time, a bad header field is reported as soon as its
    // bytes are there; a bad payload only when the whole frame is there.
    const std::vector<std::pair<std::string, std::size_t>> earliest = {
        {"wrong_magic", 1},
        {"wrong_version", 6},
        {"unknown_kind", 8},
        {"oversized_length", 12},
    };
    auto table = ReadTable(kGoldenDir + "/bad_frames.txt", 3);
    for (const auto& row : table)
    {
        SCOPED_TRACE(row[0]);
        const std::vector<uint8_t> bytes = FromHex(row[2]);
        std::size_t expectedAt = bytes.size();
        for (const auto& [name, at] : earliest)
        {
            if (name == row[0])
            {
                expectedAt = at;
            }
        }
        FrameReader reader;
        std::size_t erroredAt = 0;
        for (std::size_t i = 0; i < bytes.size() && erroredAt == 0; ++i)
        {
            reader.Append(&bytes[i], 1);
            DecodeResult r = reader.Next();
            ASSERT_NE(r.status, DecodeResult::Status::Frame);
            if (r.status == DecodeResult::Status::Error)
            {
                erroredAt = i + 1;
                EXPECT_EQ(ToString(r.error.errorClass), row[1]);
            }
        }
        EXPECT_EQ(erroredAt, expectedAt);
    }
}

TEST(WireGolden, VersionMismatchNamesBothVersions)
{
    auto table = ReadTable(kGoldenDir + "/bad_frames.txt", 3);
    for (const auto& row : table)
    {
        if (row[0] != "wrong_version")
        {
            continue;
        }
        const std::vector<uint8_t> bytes = FromHex(row[2]);
        DecodeResult r = Decode(bytes.data(), bytes.size());
        ASSERT_EQ(r.status, DecodeResult::Status::Error);
        EXPECT_EQ(r.error.foundVersion, 99);
        EXPECT_NE(r.error.message.find("99"), std::string::npos) << r.error.message;
        EXPECT_NE(r.error.message.find("version 1"), std::string::npos) << r.error.message;
        return;
    }
    FAIL() << "no wrong_version case in bad_frames.txt";
}

} // namespace
