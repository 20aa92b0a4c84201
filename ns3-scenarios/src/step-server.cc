#include "step-server.h"

#include "shm-connection.h"
#include "tcp-connection.h"
#include "wire.h"

#include "ns3/log.h"

#include <exception>
#include <utility>
#include <vector>

namespace netloop
{

NS_LOG_COMPONENT_DEFINE("NetloopStepServer");

namespace
{

AddressOf
OrDefault(AddressOf addressOf, const ns3::NodeContainer& nodes)
{
    return addressOf ? std::move(addressOf) : FirstInterfaceAddresses(nodes);
}

std::string
OrDefaultDescription(std::string description, const ns3::NodeContainer& nodes)
{
    return description.empty() ? "ns-3 network of " + std::to_string(nodes.GetN()) + " nodes"
                               : std::move(description);
}

} // namespace

namespace
{

/// Answers frames on `connection` (a TcpConnection or a ShmConnection) until
/// Finish (0) or a failure (1).
template <typename Connection>
int
ServeOn(StepEngine& engine, Connection& connection, const ServeOptions& options)
{
    std::ostream& log = *options.log;
    std::string error;
    Session session(engine, options.software);
    wire::FrameReader reader;
    std::vector<uint8_t> buffer(64 * 1024);
    for (;;)
    {
        Session::Reply reply;
        wire::DecodeResult frame = reader.Next();
        if (frame.status == wire::DecodeResult::Status::Incomplete)
        {
            std::size_t received = 0;
            switch (connection.Read(buffer.data(),
                                    buffer.size(),
                                    &received,
                                    options.idleTimeoutNs,
                                    &error))
            {
            case Connection::ReadStatus::Data:
                reader.Append(buffer.data(), received);
                continue;
            case Connection::ReadStatus::Eof:
                if (reader.Buffered() > 0)
                {
                    log << "netloop-server: the bridge closed the connection in the middle of a "
                           "frame ("
                        << reader.Buffered() << " bytes received) at simulated time "
                        << wire::FormatTime(engine.GetNow()) << std::endl;
                }
                else
                {
                    log << "netloop-server: the bridge closed the connection without Finish at "
                           "simulated time "
                        << wire::FormatTime(engine.GetNow()) << std::endl;
                }
                return 1;
            case Connection::ReadStatus::Failed:
                log << "netloop-server: " << error << " at simulated time "
                    << wire::FormatTime(engine.GetNow()) << std::endl;
                return 1;
            case Connection::ReadStatus::Timeout:
                reply = session.Abort("no request from the bridge within " +
                                      wire::FormatTime(options.idleTimeoutNs) +
                                      " (--idleTimeout); closing");
                break;
            }
        }
        else if (frame.status == wire::DecodeResult::Status::Error)
        {
            reply = session.HandleFrameError(frame.error);
        }
        else
        {
            try
            {
                reply = session.Handle(frame.message);
            }
            catch (const std::exception& e)
            {
                reply = session.Abort(std::string("internal error: ") + e.what());
            }
        }

        if (reply.message && options.beforeSummary &&
            std::holds_alternative<wire::Summary>(*reply.message))
        {
            options.beforeSummary();
        }
        if (reply.message)
        {
            std::vector<uint8_t> bytes;
            std::string encodeError;
            if (!wire::EncodeInto(*reply.message, bytes, wire::kMaxPayload, &encodeError))
            {
                reply = session.Abort(encodeError + "; use shorter steps");
                bytes.clear();
                wire::EncodeInto(*reply.message, bytes, wire::kMaxPayload, &encodeError);
            }
            if (!connection.WriteAll(bytes.data(), bytes.size(), options.idleTimeoutNs, &error))
            {
                log << "netloop-server: cannot send "
                    << wire::ToString(wire::KindOf(*reply.message)) << " to the bridge: " << error
                    << std::endl;
                return 1;
            }
        }
        if (reply.close)
        {
            const bool finished = session.GetState() == Session::State::Finished;
            // After Finish the bridge sends nothing more: close at once. After an
            // error, drain so that the Error frame is not lost to a reset.
            connection.Close(!finished);
            if (finished)
            {
                return 0;
            }
            log << "netloop-server: " << reply.log << std::endl;
            return 1;
        }
    }
}

} // namespace

StepServer::StepServer(ns3::NodeContainer nodes, AddressOf addressOf, std::string description)
    : m_engine(nodes,
               OrDefault(std::move(addressOf), nodes),
               OrDefaultDescription(std::move(description), nodes))
{
}

StepEngine&
StepServer::GetEngine()
{
    return m_engine;
}

int
StepServer::Serve(const ServeOptions& options)
{
    std::ostream& log = *options.log;
    std::string error;
    if (options.shmFd >= 0)
    {
        ShmConnection connection;
        if (!connection.Open(options.shmFd, &error))
        {
            log << "netloop-server: --shmFd=" << options.shmFd << ": " << error << std::endl;
            return 1;
        }
        *options.portOut << 0 << std::endl; // "ready" (no port): the bridge waits on this line
        NS_LOG_INFO("serving the inherited shared-memory channel " << options.shmFd);
        connection.SetSpin(options.spinNs);
        return ServeOn(m_engine, connection, options);
    }
    int fd = -1;
    if (options.connectionFd >= 0)
    {
        // Handed over by the bridge: check it, and keep it from our own children.
        uint16_t port = 0;
        if (!AdoptConnection(options.connectionFd, &port, &error))
        {
            log << "netloop-server: --connectionFd=" << options.connectionFd << ": " << error
                << std::endl;
            return 1;
        }
        fd = options.connectionFd;
        *options.portOut << port << std::endl; // "ready": the bridge waits on this line
        NS_LOG_INFO("serving the inherited connection " << fd);
    }
    else
    {
        TcpListener listener;
        if (!listener.Open(options.port, &error))
        {
            log << "netloop-server: " << error << std::endl;
            return 1;
        }
        *options.portOut << listener.GetPort() << std::endl; // endl flushes: the bridge waits on it
        fd = listener.Accept(options.acceptTimeoutNs, &error);
        if (fd < 0)
        {
            log << "netloop-server: no connection from the bridge on 127.0.0.1:"
                << listener.GetPort() << " within " << wire::FormatTime(options.acceptTimeoutNs)
                << " (" << error << ")" << std::endl;
            return 1;
        }
        listener.Close();
        NS_LOG_INFO("bridge connected on port " << listener.GetPort());
    }
    TcpConnection connection(fd);
    connection.SetSpin(options.spinNs);
    return ServeOn(m_engine, connection, options);
}

} // namespace netloop
