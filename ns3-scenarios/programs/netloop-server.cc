/*
 * netloop-server: the ns-3 side of netloop.
 *
 * Builds a network (--network=p2p: a chain or star of --nodes nodes joined by
 * point-to-point links), then serves it to the netloop bridge over TCP on
 * 127.0.0.1: prints the port as the first line of stdout, accepts one
 * connection, and steps the simulation on request (see README.md).
 *
 * Defaults: 2 nodes in a chain, 10Mbps, 2ms, device queue of 100 packets, no
 * loss, seed 1, run 1, an ephemeral port.
 *
 * Reproducing a run: the same arguments (in particular --seed and --run) and
 * the same requests give the same results. Replications change --run, not
 * --seed.
 *
 * Run by hand:  netloop-server --PrintHelp
 *               netloop-server --topology=star --nodes=4 --lossRate=0.01 --run=3
 *
 * Exit codes: 0 after Finish; 1 when serving fails (protocol error, the bridge
 * closed or went silent, no connection in time); 2 for a bad argument value.
 * ns-3's own CommandLine exits with 1 for an unknown argument or a value it
 * cannot parse into the argument's type.
 */
#include "network-builder.h"
#include "p2p-network.h"
#include "step-server.h"
#include "wire.h"

#include "ns3/command-line.h"
#include "ns3/core-module.h"

#include <csignal>
#include <iostream>
#include <memory>
#include <vector>

using namespace netloop;

namespace
{

/// Exit code for a bad argument value.
constexpr int kExitBadArguments = 2;

int
BadArgument(const std::string& message)
{
    std::cerr << "netloop-server: " << message << " (see --PrintHelp)" << std::endl;
    return kExitBadArguments;
}

} // namespace

int
main(int argc, char* argv[])
{
    // A write to a closed connection must be an error we report, not a signal.
    std::signal(SIGPIPE, SIG_IGN);

    // Defaults.
    std::string network = "p2p";
    uint32_t nodeCount = 2;
    uint32_t seed = 1;
    uint64_t run = 1;
    uint32_t port = 0;
    // Durations are strings parsed exactly (wire::ParseDuration, the grammar of the
    // Rust side) rather than ns3::Time: Time's parser goes through double and aborts
    // on an unknown unit, and a typo on the command line must be an error message.
    std::string acceptTimeout = "60s";
    std::string idleTimeout = "1h";

    // Network kinds: add further builders (Wi-Fi, WAVE, LTE) here.
    std::vector<std::unique_ptr<NetworkBuilder>> builders;
    builders.push_back(std::make_unique<P2pNetworkBuilder>());

    // Command line.
    ns3::CommandLine cmd(__FILE__);
    cmd.Usage("ns-3 stepping server for netloop: builds a network and serves it to the netloop "
              "bridge over TCP on 127.0.0.1. The first line of stdout is the port number.");
    cmd.AddValue("network", "kind of network: p2p (point-to-point links)", network);
    cmd.AddValue("nodes", "number of nodes, indexed 0..nodes-1 in flows", nodeCount);
    cmd.AddValue("seed", "ns-3 RNG seed (RngSeedManager::SetSeed), integer >= 1", seed);
    cmd.AddValue("run",
                 "ns-3 RNG run number (RngSeedManager::SetRun); change it for replications",
                 run);
    cmd.AddValue("port", "TCP port on 127.0.0.1 to listen on; 0 picks a free one", port);
    cmd.AddValue("acceptTimeout",
                 "wall-clock time to wait for the bridge to connect, with unit (e.g. 60s); 0 "
                 "waits forever",
                 acceptTimeout);
    cmd.AddValue("idleTimeout",
                 "wall-clock time to wait for each request from the bridge, with unit (e.g. "
                 "1h); 0 waits forever",
                 idleTimeout);
    for (auto& builder : builders)
    {
        builder->AddArguments(cmd);
    }
    cmd.Parse(argc, argv);

    // Validation.
    NetworkBuilder* builder = nullptr;
    for (auto& b : builders)
    {
        if (b->GetName() == network)
        {
            builder = b.get();
        }
    }
    if (!builder)
    {
        return BadArgument("--network=" + network + " is not a network kind; use p2p");
    }
    if (seed == 0)
    {
        return BadArgument("--seed=0: the seed must be at least 1");
    }
    if (port > 65535)
    {
        return BadArgument("--port=" + std::to_string(port) + " is not a TCP port");
    }
    ServeOptions options;
    options.port = static_cast<uint16_t>(port);
    std::string error;
    if (!wire::ParseDuration(acceptTimeout, &options.acceptTimeoutNs, &error))
    {
        return BadArgument("--acceptTimeout=" + acceptTimeout + ": " + error);
    }
    if (!wire::ParseDuration(idleTimeout, &options.idleTimeoutNs, &error))
    {
        return BadArgument("--idleTimeout=" + idleTimeout + ": " + error);
    }
    if (auto problem = builder->Validate(nodeCount))
    {
        return BadArgument(*problem);
    }

    // Random numbers: seed and run first, then explicit streams while building.
    ns3::RngSeedManager::SetSeed(seed);
    ns3::RngSeedManager::SetRun(run);

    // Network.
    BuiltNetwork built = builder->Build(nodeCount, 0);
    std::clog << "netloop-server: " << built.description << " (seed " << seed << ", run " << run
              << ")" << std::endl;

    // Serve, then clean up.
    int status;
    {
        StepServer server(built.nodes, built.addressOf, built.description);
        status = server.Serve(options);
    }
    ns3::Simulator::Destroy();
    return status;
}
