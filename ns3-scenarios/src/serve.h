/*
 * Serving a network to the bridge with the arguments every server takes
 * (seed, run, port, timeouts, trace files): the one call behind
 * netloop-server and behind a user's own ns-3 script.
 *
 *     netloop::ServeArguments serve;             // --seed --run --port --acceptTimeout
 *     netloop::CheckedCommandLine cmd(__FILE__);  // --idleTimeout --pcap --ascii
 *     serve.AddArguments(cmd);                    // --flowMonitor --netanim --dropLog
 *     if (auto problem = cmd.Parse(argc, argv))   // any bad argument, named:
 *         return netloop::BadArgument(*problem);  // exit code 2
 *     serve.ApplySeed();                          // before building anything random
 *     ... build nodes, devices, addresses, routing ...
 *     return netloop::Serve(nodes, serve);        // node index = position in the container
 */
#ifndef NETLOOP_SERVE_H
#define NETLOOP_SERVE_H

#include "checked-command-line.h"
#include "network-builder.h"
#include "step-server.h"
#include "traces.h"

#include "ns3/node-container.h"

#include <cstdint>
#include <optional>
#include <string>

namespace netloop
{

/// Exit code for a bad argument (BadArgument; CheckedCommandLine keeps ns-3's
/// CommandLine from exiting with 1 for the ones it cannot read).
constexpr int kExitBadArguments = 2;

/// The arguments of every served run, as typed.
struct ServeArguments
{
    uint32_t seed = 1;                 //!< RngSeedManager::SetSeed
    uint64_t run = 1;                  //!< RngSeedManager::SetRun
    uint32_t port = 0;                 //!< TCP port on 127.0.0.1; 0 = ephemeral
    int32_t connectionFd = -1;         //!< inherited connection to serve; -1 = listen on port
    int32_t shmFd = -1;                //!< inherited shared-memory channel to serve; -1 = none
    std::string acceptTimeout = "60s"; //!< wait for the bridge to connect
    std::string idleTimeout = "1h";    //!< wait for each request
    std::string spinWait = "0s";       //!< poll for each request this long before blocking
    TraceOptions traces;               //!< trace files

    /// Registers --seed, --run, --port, --connectionFd, --shmFd, --acceptTimeout,
    /// --idleTimeout, --spinWait and the trace arguments.
    void AddArguments(CheckedCommandLine& cmd);
    /// \return nullopt, or a message naming the bad argument
    std::optional<std::string> Validate() const;
    /// RngSeedManager::SetSeed(seed), SetRun(run).
    void ApplySeed() const;
    /// The listening options (Validate() must have passed).
    ServeOptions ToServeOptions() const;
};

/**
 * Serves a network: validates the arguments (a message on stderr and
 * kExitBadArguments if bad), starts the requested traces, hooks the
 * network's own drop traces and serves one bridge connection. The trace
 * files are written and network.onFinish called before the Summary is sent
 * (so they are complete when the bridge sees it), or, when the session ends
 * otherwise (the bridge went away, an error), right after it ended. Does not destroy the simulator;
 * the caller does, and runs nothing more. \return 0 after Finish, 1 when serving failed, 2 for a
 * bad argument
 */
int Serve(const BuiltNetwork& network, const ServeArguments& arguments);

/**
 * Serves a user's nodes (node index = position in the container) as they
 * are, with the drop traces of their Wi-Fi, WAVE and CSMA devices and ARP
 * hooked (HookDeviceDrops) besides the standard ones.
 */
int Serve(const ns3::NodeContainer& nodes, const ServeArguments& arguments);

/**
 * Prints the problem to stderr twice: first one line for the bridge,
 * "netloop-problem: {"argument":"queueSize","message":"..."}", then
 * "netloop-server: <message> (see --PrintHelp)" for people.
 * \return kExitBadArguments
 */
int BadArgument(const ArgumentProblem& problem);
/// BadArgument for a message written "--name..." (ArgumentProblem::FromMessage).
int BadArgument(const std::string& message);

} // namespace netloop

#endif // NETLOOP_SERVE_H
