#include "serve.h"

#include "wire.h"
#include "wireless-drops.h"

#include "ns3/rng-seed-manager.h"

#include <iostream>

namespace netloop
{

namespace
{
/// The longest --spinWait: past a millisecond a blocking wait costs nothing by comparison.
constexpr uint64_t kMaxSpinWaitNs = 1000000;
} // namespace

void
ServeArguments::AddArguments(CheckedCommandLine& cmd)
{
    cmd.AddValue("seed", "ns-3 RNG seed (RngSeedManager::SetSeed), integer >= 1", seed);
    cmd.AddValue("run",
                 "ns-3 RNG run number (RngSeedManager::SetRun); change it for replications",
                 run);
    cmd.AddValue("port", "TCP port on 127.0.0.1 to listen on; 0 picks a free one", port);
    cmd.AddValue("connectionFd",
                 "an inherited, connected socket to serve instead of listening (the bridge "
                 "passes it, so that no other process can reach the server); -1 listens on "
                 "--port",
                 connectionFd);
    cmd.AddValue("shmFd",
                 "an inherited shared-memory channel (a memfd the bridge made, transport "
                 "\"shm\") to serve instead of a socket; -1 for none",
                 shmFd);
    cmd.AddValue("acceptTimeout",
                 "wall-clock time to wait for the bridge to connect, with unit (e.g. 60s); 0 "
                 "waits forever",
                 acceptTimeout);
    cmd.AddValue("idleTimeout",
                 "wall-clock time to wait for each request from the bridge, with unit (e.g. "
                 "1h); 0 waits forever",
                 idleTimeout);
    cmd.AddValue("spinWait",
                 "wall-clock time to poll for each request before blocking, with unit (e.g. "
                 "50us; at most 1ms): an answer within it skips the sleep and wake-up of a "
                 "blocking wait, at the cost of a busy core meanwhile; 0s blocks at once",
                 spinWait);
    traces.AddArguments(cmd);
}

std::optional<std::string>
ServeArguments::Validate() const
{
    if (seed == 0)
    {
        return std::string("--seed=0: the seed must be at least 1");
    }
    if (port > 65535)
    {
        return "--port=" + std::to_string(port) + " is not a TCP port";
    }
    if (connectionFd < -1)
    {
        return "--connectionFd=" + std::to_string(connectionFd) + " is not a descriptor";
    }
    if (connectionFd >= 0 && port != 0)
    {
        return std::string("--connectionFd and --port: give one (a connection to serve, or a "
                           "port to listen on)");
    }
    if (shmFd < -1)
    {
        return "--shmFd=" + std::to_string(shmFd) + " is not a descriptor";
    }
    if (shmFd >= 0 && (connectionFd >= 0 || port != 0))
    {
        return std::string("--shmFd and --connectionFd or --port: give one (a channel to "
                           "serve, a connection, or a port to listen on)");
    }
    uint64_t ns = 0;
    std::string error;
    if (!wire::ParseDuration(acceptTimeout, &ns, &error))
    {
        return "--acceptTimeout=" + acceptTimeout + ": " + error;
    }
    if (!wire::ParseDuration(idleTimeout, &ns, &error))
    {
        return "--idleTimeout=" + idleTimeout + ": " + error;
    }
    if (!wire::ParseDuration(spinWait, &ns, &error))
    {
        return "--spinWait=" + spinWait + ": " + error;
    }
    if (ns > kMaxSpinWaitNs)
    {
        return "--spinWait=" + spinWait + ": at most 1ms (a longer spin only burns the core)";
    }
    return traces.Validate();
}

void
ServeArguments::ApplySeed() const
{
    ns3::RngSeedManager::SetSeed(seed);
    ns3::RngSeedManager::SetRun(run);
}

ServeOptions
ServeArguments::ToServeOptions() const
{
    ServeOptions options;
    options.port = static_cast<uint16_t>(port);
    options.connectionFd = connectionFd;
    options.shmFd = shmFd;
    std::string error;
    wire::ParseDuration(acceptTimeout, &options.acceptTimeoutNs, &error);
    wire::ParseDuration(idleTimeout, &options.idleTimeoutNs, &error);
    wire::ParseDuration(spinWait, &options.spinNs, &error);
    return options;
}

int
BadArgument(const ArgumentProblem& problem)
{
    std::cerr << "netloop-problem: {\"argument\":" << JsonQuote(problem.argument)
              << ",\"message\":" << JsonQuote(problem.message) << "}\n"
              << "netloop-server: " << problem.message << " (see --PrintHelp)" << std::endl;
    return kExitBadArguments;
}

int
BadArgument(const std::string& message)
{
    return BadArgument(ArgumentProblem::FromMessage(message));
}

int
Serve(const BuiltNetwork& network, const ServeArguments& arguments)
{
    if (auto problem = arguments.Validate())
    {
        return BadArgument(*problem);
    }
    TraceSession traces(arguments.traces);
    if (auto problem = traces.Start())
    {
        return BadArgument(*problem);
    }
    bool finished = false;
    auto finish = [&traces, &network, &finished]() {
        if (finished)
        {
            return;
        }
        finished = true;
        traces.Finish();
        if (network.onFinish)
        {
            network.onFinish();
        }
    };
    int status;
    {
        StepServer server(network.nodes, network.addressOf, network.description);
        server.GetEngine().SetDropLog(traces.GetDropLog());
        server.GetEngine().HookDrops(network.hookDrops);
        ServeOptions options = arguments.ToServeOptions();
        // Trace files complete before the Summary tells the bridge the run is over.
        options.beforeSummary = finish;
        status = server.Serve(options);
        // Also when the bridge went away or the session failed: write what there is.
        finish();
    }
    return status;
}

int
Serve(const ns3::NodeContainer& nodes, const ServeArguments& arguments)
{
    BuiltNetwork network;
    network.nodes = nodes;
    network.hookDrops = [nodes](DropSink* sink, DropTraceConnections& connections, bool obs) {
        return HookDeviceDrops(nodes, sink, connections, obs);
    };
    return Serve(network, arguments);
}

} // namespace netloop
