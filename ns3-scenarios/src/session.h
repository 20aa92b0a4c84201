/*
 * The protocol state machine of one bridge connection, sans-IO: messages in,
 * replies out. The StepServer feeds it decoded frames and sends its replies.
 */
#ifndef NETLOOP_SESSION_H
#define NETLOOP_SESSION_H

#include "step-engine.h"
#include "wire.h"

#include <optional>
#include <string>

namespace netloop
{

/// The software string of this server, e.g. "netloop-ns3-server 0.1.0 (ns-3.37)".
std::string ServerSoftware();

/**
 * \brief One bridge conversation (docs/design.md §7.4), over a StepEngine.
 *
 * Hello -> Hello; Configure -> Configured; optionally, once before the first
 * Step, Rules -> RulesInstalled; Step -> StepDone (repeatedly);
 * Finish -> Summary, then close. Anything else at a point is fatal: the reply
 * is an Error and the connection closes. An Error from the bridge closes the
 * connection without a reply.
 */
class Session
{
  public:
    /// Where the conversation is.
    enum class State
    {
        AwaitHello,     //!< nothing received yet
        AwaitConfigure, //!< handshake done
        Stepping,       //!< configured: Step, Rules (before a Step) or Finish
        Finished,       //!< Summary sent; success
        Failed,         //!< an error ended the conversation
    };

    /// What to do after a message.
    struct Reply
    {
        std::optional<wire::Message> message; //!< to send, if any
        bool close = false;                   //!< close the connection afterwards
        std::string log;                      //!< for stderr when the session fails
    };

    /**
     * \param engine the network to serve
     * \param software the software string sent in Hello
     */
    Session(StepEngine& engine, std::string software);

    /// Handles one decoded message.
    Reply Handle(const wire::Message& message);
    /// Handles a frame that could not be decoded: an Error reply, then close.
    Reply HandleFrameError(const wire::WireError& error);
    /// Ends the session because of a local problem (I/O, timeout): Error Internal.
    Reply Abort(const std::string& reason);
    /// \return the state
    State GetState() const;

  private:
    /// An Error reply that closes the session.
    Reply Fail(wire::ErrorCode code, const std::string& message);
    /// The kinds that are expected in the current state, for messages.
    std::string Expected() const;

    StepEngine& m_engine;              //!< the network
    std::string m_software;            //!< our Hello software string
    State m_state = State::AwaitHello; //!< where we are
};

} // namespace netloop

#endif // NETLOOP_SESSION_H
