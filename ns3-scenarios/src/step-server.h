/*
 * The stepping server: serves a set of ns-3 nodes to the netloop bridge over
 * one TCP connection on 127.0.0.1 (docs/design.md §6-§7).
 *
 * Serving an existing ns-3 script's nodes is one call, after the script has
 * built its network (addresses assigned, routing populated):
 *
 *     netloop::StepServer server(nodes);
 *     return server.Serve();
 */
#ifndef NETLOOP_STEP_SERVER_H
#define NETLOOP_STEP_SERVER_H

#include "session.h"
#include "step-engine.h"

#include "ns3/node-container.h"

#include <cstdint>
#include <functional>
#include <iostream>
#include <string>

namespace netloop
{

/// How Serve() listens and how long it waits.
struct ServeOptions
{
    uint16_t port = 0; //!< 0: the kernel picks a free port
    /// A connected stream socket, inherited from the process that started this
    /// one, to serve instead of listening (-1: listen on port). Nobody else can
    /// reach a server that never listens: the bridge always hands one over.
    int connectionFd = -1;
    /// A shared-memory channel (a memfd the bridge made, bridge/ns3-client/src/shm.rs)
    /// to serve instead of a socket (-1: none). Like connectionFd, reachable
    /// by no one else.
    int shmFd = -1;
    uint64_t acceptTimeoutNs = 60ULL * 1000000000; //!< wait for the bridge to connect; 0: forever
    uint64_t idleTimeoutNs = 3600ULL * 1000000000; //!< wait for each request; 0: forever
    /// Poll for the next request this long before blocking (TcpConnection::SetSpin); 0: block
    uint64_t spinNs = 0;
    std::ostream* portOut = &std::cout;      //!< gets the port line
    std::ostream* log = &std::cerr;          //!< gets the reason when serving fails
    std::string software = ServerSoftware(); //!< sent in Hello
    /// Called after Finish and before the Summary goes out (e.g. to write trace
    /// files, so that they are complete when the bridge sees the Summary).
    std::function<void()> beforeSummary;
};

/**
 * \brief Serves nodes to one bridge connection.
 *
 * Serve(): with a connectionFd, serve that connection (its local port is
 * the line printed; nothing listens, so no other process can connect);
 * otherwise listen on 127.0.0.1:port, print the port number alone as the first
 * line of portOut and flush, and accept one connection within acceptTimeoutNs.
 * TCP_NODELAY either way; then answer frames with the Session until Finish (exit code
 * 0) or a failure (1): a malformed frame or an unexpected message is answered
 * with an Error frame before closing; an Error from the bridge, an EOF (also
 * mid-frame) or a timeout ends the session with a message on log.
 */
class StepServer
{
  public:
    /**
     * \param nodes the nodes the bridge names, by index
     * \param addressOf where flows to a node are sent; default FirstInterfaceAddresses(nodes)
     * \param description one line describing the network; a default names the node count
     */
    explicit StepServer(ns3::NodeContainer nodes,
                        AddressOf addressOf = AddressOf(),
                        std::string description = std::string());

    /// \return the stepping core (for builders that hook more drop traces)
    StepEngine& GetEngine();

    /**
     * Serves one connection.
     * \return 0 after Finish, 1 on any failure
     */
    int Serve(const ServeOptions& options = ServeOptions());

  private:
    StepEngine m_engine; //!< the network
};

} // namespace netloop

#endif // NETLOOP_STEP_SERVER_H
