#include "session.h"

#include "ns3/log.h"
#include "ns3/version-defines.h"

#include <utility>

#ifndef NETLOOP_VERSION
#define NETLOOP_VERSION "0.0.0"
#endif

namespace netloop
{

NS_LOG_COMPONENT_DEFINE("NetloopSession");

std::string
ServerSoftware()
{
    return std::string("netloop-ns3-server ") + NETLOOP_VERSION + " (ns-" +
           std::to_string(NS3_VERSION_MAJOR) + "." + std::to_string(NS3_VERSION_MINOR) + ")";
}

namespace
{

/// At most 80 bytes of a UTF-8 string, cut at a character boundary, for messages.
std::string
Shortened(const std::string& text)
{
    constexpr std::size_t kMax = 80;
    if (text.size() <= kMax)
    {
        return text;
    }
    std::size_t end = kMax;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
    {
        --end; // do not split a multi-byte character
    }
    return text.substr(0, end) + "...";
}

} // namespace

Session::Session(StepEngine& engine, std::string software)
    : m_engine(engine),
      m_software(std::move(software))
{
}

Session::State
Session::GetState() const
{
    return m_state;
}

std::string
Session::Expected() const
{
    switch (m_state)
    {
    case State::AwaitHello:
        return "Hello";
    case State::AwaitConfigure:
        return "Configure";
    case State::Stepping:
        return "Step, Rules or Finish";
    case State::Finished:
    case State::Failed:
        break;
    }
    return "nothing (the session is over)";
}

Session::Reply
Session::Fail(wire::ErrorCode code, const std::string& message)
{
    NS_LOG_WARN("session fails: " << message);
    m_state = State::Failed;
    Reply reply;
    reply.message = wire::Error{code, message};
    reply.close = true;
    reply.log = std::string("sent Error ") + wire::ToString(code) + ": " + message;
    return reply;
}

Session::Reply
Session::Handle(const wire::Message& message)
{
    const wire::MessageKind kind = wire::KindOf(message);
    NS_LOG_FUNCTION(this << wire::ToString(kind));
    if (const auto* error = std::get_if<wire::Error>(&message))
    {
        m_state = State::Failed;
        Reply reply;
        reply.close = true;
        reply.log = std::string("the bridge reported ") + wire::ToString(error->code) + ": " +
                    error->message;
        return reply;
    }
    const std::string unexpected = std::string("unexpected ") + wire::ToString(kind) +
                                   " message: expected " + Expected() + " at simulated time " +
                                   wire::FormatTime(m_engine.GetNow());
    switch (m_state)
    {
    case State::AwaitHello: {
        const auto* hello = std::get_if<wire::Hello>(&message);
        if (!hello)
        {
            return Fail(wire::ErrorCode::UnexpectedMessage, unexpected);
        }
        if (hello->protocolVersion != wire::kProtocolVersion)
        {
            return Fail(wire::ErrorCode::UnsupportedVersion,
                        "the bridge (" + Shortened(hello->software) + ") speaks protocol version " +
                            std::to_string(hello->protocolVersion) +
                            "; this server speaks version " +
                            std::to_string(wire::kProtocolVersion));
        }
        m_state = State::AwaitConfigure;
        Reply reply;
        reply.message = wire::Hello{wire::kProtocolVersion, m_software};
        return reply;
    }
    case State::AwaitConfigure: {
        const auto* configure = std::get_if<wire::Configure>(&message);
        if (!configure)
        {
            return Fail(wire::ErrorCode::UnexpectedMessage, unexpected);
        }
        auto result = m_engine.Configure(*configure);
        if (auto* error = std::get_if<wire::Error>(&result))
        {
            return Fail(error->code, error->message);
        }
        m_state = State::Stepping;
        Reply reply;
        reply.message = std::get<wire::Configured>(std::move(result));
        return reply;
    }
    case State::Stepping: {
        if (const auto* step = std::get_if<wire::Step>(&message))
        {
            auto result = m_engine.Step(*step);
            if (auto* error = std::get_if<wire::Error>(&result))
            {
                return Fail(error->code, error->message);
            }
            Reply reply;
            reply.message = std::get<wire::StepDone>(std::move(result));
            return reply;
        }
        if (const auto* rules = std::get_if<wire::Rules>(&message))
        {
            auto result = m_engine.SetRules(*rules);
            if (auto* error = std::get_if<wire::Error>(&result))
            {
                return Fail(error->code, error->message);
            }
            Reply reply;
            reply.message = std::get<wire::RulesInstalled>(std::move(result));
            return reply;
        }
        if (std::holds_alternative<wire::Finish>(message))
        {
            m_state = State::Finished;
            Reply reply;
            reply.message = m_engine.Finish();
            reply.close = true;
            return reply;
        }
        return Fail(wire::ErrorCode::UnexpectedMessage, unexpected);
    }
    case State::Finished:
    case State::Failed:
        break;
    }
    return Fail(wire::ErrorCode::UnexpectedMessage, unexpected);
}

Session::Reply
Session::HandleFrameError(const wire::WireError& error)
{
    const wire::ErrorCode code = error.errorClass == wire::WireErrorClass::UnsupportedVersion
                                     ? wire::ErrorCode::UnsupportedVersion
                                     : wire::ErrorCode::BadFrame;
    return Fail(code, error.message);
}

Session::Reply
Session::Abort(const std::string& reason)
{
    return Fail(wire::ErrorCode::Internal, reason);
}

} // namespace netloop
