/*
 * The protocol state machine over a real engine: the handshake, the order of
 * messages, version checks, and what ends a session.
 */
#include "p2p-network.h"
#include "session.h"
#include "step-engine.h"

#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>
#include <memory>
#include <string>

using namespace netloop;
using namespace netloop::wire;

namespace
{

class SessionTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        P2pOptions options;
        auto parameters = std::get<P2pParameters>(ParseP2pOptions(options, 2));
        ns3::RngSeedManager::SetSeed(1);
        ns3::RngSeedManager::SetRun(1);
        BuiltNetwork built = BuildP2pNetwork(parameters, 2, 0);
        m_engine = std::make_unique<StepEngine>(built.nodes, built.addressOf, built.description);
        m_session = std::make_unique<Session>(*m_engine, ServerSoftware());
    }

    void TearDown() override
    {
        m_session.reset();
        m_engine.reset();
        ns3::Simulator::Destroy();
    }

    /// Handles a message and expects an Error reply of that code that closes.
    void ExpectFatal(const Message& m, ErrorCode code, const std::string& needle)
    {
        Session::Reply r = m_session->Handle(m);
        ASSERT_TRUE(r.message.has_value());
        const auto* e = std::get_if<Error>(&*r.message);
        ASSERT_NE(e, nullptr) << "reply is " << ToString(KindOf(*r.message));
        EXPECT_EQ(e->code, code);
        EXPECT_NE(e->message.find(needle), std::string::npos) << e->message;
        EXPECT_TRUE(r.close);
        EXPECT_EQ(m_session->GetState(), Session::State::Failed);
    }

    void Handshake()
    {
        Session::Reply r = m_session->Handle(Hello{kProtocolVersion, "test"});
        ASSERT_TRUE(r.message && std::holds_alternative<Hello>(*r.message));
        r = m_session->Handle(Configure{{FlowSpec{0, 9000, 0, 1, Transport::Udp, true}}});
        ASSERT_TRUE(r.message && std::holds_alternative<Configured>(*r.message));
    }

    std::unique_ptr<StepEngine> m_engine;
    std::unique_ptr<Session> m_session;
};

TEST_F(SessionTest, AWholeConversation)
{
    Session::Reply r = m_session->Handle(Hello{kProtocolVersion, "netloop test"});
    ASSERT_TRUE(r.message.has_value());
    const Hello& hello = std::get<Hello>(*r.message);
    EXPECT_EQ(hello.protocolVersion, kProtocolVersion);
    EXPECT_NE(hello.software.find("ns-3.37"), std::string::npos) << hello.software;
    EXPECT_FALSE(r.close);

    r = m_session->Handle(Configure{{FlowSpec{0, 9000, 0, 1, Transport::Udp, false}}});
    const Configured& configured = std::get<Configured>(*r.message);
    EXPECT_EQ(configured.nodeCount, 2u);
    EXPECT_NE(configured.description.find("p2p chain of 2 nodes"), std::string::npos);

    Step step;
    step.until = 50000000;
    step.sends.push_back(SendRequest{0, 1, 0, 1, 0, 100});
    r = m_session->Handle(step);
    const StepDone& done = std::get<StepDone>(*r.message);
    EXPECT_EQ(done.reached, 50000000u);
    EXPECT_EQ(done.deliveries.size(), 1u);
    EXPECT_EQ(m_session->GetState(), Session::State::Stepping);

    r = m_session->Handle(Finish{});
    const Summary& summary = std::get<Summary>(*r.message);
    EXPECT_EQ(summary.reached, 50000000u);
    ASSERT_EQ(summary.flows.size(), 1u);
    EXPECT_EQ(summary.flows[0].delivered, 1u);
    EXPECT_TRUE(r.close);
    EXPECT_EQ(m_session->GetState(), Session::State::Finished);
}

TEST_F(SessionTest, RulesComeOnceBeforeTheFirstStep)
{
    Session::Reply r = m_session->Handle(Hello{kProtocolVersion, "test"});
    r = m_session->Handle(Configure{{FlowSpec{0, 9000, 0, 1, Transport::Udp, false},
                                     FlowSpec{1, 9001, 1, 0, Transport::Udp, false}}});
    ASSERT_TRUE(r.message && std::holds_alternative<Configured>(*r.message));
    Rules rules;
    rules.rules.push_back(AnswerRule{0, 1, 0, 40, 1, UINT64_MAX, false, 1000000000});
    r = m_session->Handle(rules);
    ASSERT_TRUE(r.message && std::holds_alternative<RulesInstalled>(*r.message));
    EXPECT_EQ(std::get<RulesInstalled>(*r.message).count, 1u);
    EXPECT_FALSE(r.close);
    EXPECT_EQ(m_session->GetState(), Session::State::Stepping);
    ExpectFatal(rules, ErrorCode::UnexpectedMessage, "once, after Configure");
}

TEST_F(SessionTest, RulesAfterAStepAreUnexpected)
{
    Handshake();
    Step step;
    step.until = 1000000;
    Session::Reply r = m_session->Handle(step);
    ASSERT_TRUE(r.message && std::holds_alternative<StepDone>(*r.message));
    ExpectFatal(Rules{}, ErrorCode::UnexpectedMessage, "before the first Step");
}

TEST_F(SessionTest, AnotherProtocolVersionInHelloIsRefusedNamingBoth)
{
    ExpectFatal(Hello{2, "netloop 9.9"}, ErrorCode::UnsupportedVersion, "version 2");
    Session::Reply again = m_session->Handle(Hello{kProtocolVersion, "x"});
    EXPECT_TRUE(again.close) << "a failed session stays failed";
}

TEST_F(SessionTest, ALongSoftwareStringIsShortenedInTheMessageWithoutBreakingUtf8)
{
    std::string software(79, 'a');
    for (int i = 0; i < 100; ++i)
    {
        software += "\xE2\x82\xAC"; // a 3-byte character straddles the cut at 80 bytes
    }
    Session::Reply r = m_session->Handle(Hello{3, software});
    const std::string& message = std::get<Error>(*r.message).message;
    EXPECT_LT(message.size(), 200u);
    EXPECT_TRUE(IsValidUtf8(message));
    EXPECT_FALSE(Encode(*r.message).empty());
}

TEST_F(SessionTest, VersionMessageNamesOurVersionToo)
{
    ExpectFatal(Hello{7, "other"}, ErrorCode::UnsupportedVersion, "this server speaks version 1");
}

TEST_F(SessionTest, MessagesOutOfOrderAreUnexpected)
{
    ExpectFatal(Step{}, ErrorCode::UnexpectedMessage, "expected Hello");
}

TEST_F(SessionTest, StepBeforeConfigureIsUnexpected)
{
    m_session->Handle(Hello{kProtocolVersion, "x"});
    ExpectFatal(Step{},
                ErrorCode::UnexpectedMessage,
                "unexpected Step message: expected Configure");
}

TEST_F(SessionTest, ServerMessagesFromTheClientAreUnexpected)
{
    Handshake();
    ExpectFatal(StepDone{}, ErrorCode::UnexpectedMessage, "expected Step, Rules or Finish");
}

TEST_F(SessionTest, ConfiguredFromTheClientIsUnexpected)
{
    m_session->Handle(Hello{kProtocolVersion, "x"});
    ExpectFatal(Configured{2, "x"}, ErrorCode::UnexpectedMessage, "unexpected Configured");
}

TEST_F(SessionTest, ASecondHelloIsUnexpected)
{
    Handshake();
    ExpectFatal(Hello{kProtocolVersion, "x"}, ErrorCode::UnexpectedMessage, "unexpected Hello");
}

TEST_F(SessionTest, InvalidConfigAndInvalidStepEndTheSession)
{
    m_session->Handle(Hello{kProtocolVersion, "x"});
    ExpectFatal(Configure{{FlowSpec{0, 9000, 0, 7, Transport::Udp, false}}},
                ErrorCode::InvalidConfig,
                "destination node 7 does not exist");
}

TEST_F(SessionTest, AStepBackInTimeEndsTheSession)
{
    Handshake();
    Step step;
    step.until = 5000000;
    m_session->Handle(step);
    step.until = 4000000;
    ExpectFatal(step, ErrorCode::InvalidStep, "4ms is before the time already reached, 5ms");
}

TEST_F(SessionTest, AnErrorFromTheBridgeClosesWithoutReply)
{
    Handshake();
    Session::Reply r = m_session->Handle(Error{ErrorCode::Internal, "controller diverged"});
    EXPECT_FALSE(r.message.has_value());
    EXPECT_TRUE(r.close);
    EXPECT_NE(r.log.find("controller diverged"), std::string::npos);
    EXPECT_EQ(m_session->GetState(), Session::State::Failed);
}

TEST_F(SessionTest, FrameErrorsMapToErrorCodes)
{
    WireError version;
    version.errorClass = WireErrorClass::UnsupportedVersion;
    version.message = "unsupported protocol version 99; this side speaks version 1";
    Session::Reply r = m_session->HandleFrameError(version);
    EXPECT_EQ(std::get<Error>(*r.message).code, ErrorCode::UnsupportedVersion);
    EXPECT_EQ(std::get<Error>(*r.message).message, version.message);

    for (auto c : {WireErrorClass::BadMagic,
                   WireErrorClass::UnknownKind,
                   WireErrorClass::Oversized,
                   WireErrorClass::TruncatedPayload,
                   WireErrorClass::MalformedPayload,
                   WireErrorClass::TrailingBytes})
    {
        WireError e;
        e.errorClass = c;
        e.message = ToString(c);
        r = m_session->HandleFrameError(e);
        EXPECT_EQ(std::get<Error>(*r.message).code, ErrorCode::BadFrame);
        EXPECT_TRUE(r.close);
    }
}

} // namespace
