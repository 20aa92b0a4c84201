/*
 * netloop-server: the ns-3 side of netloop.
 *
 * Builds a network (--network=p2p|wifi|wave|lte, --nodes addressable nodes,
 * see README.md for every argument), then serves it to the netloop bridge
 * over TCP on 127.0.0.1, and steps the simulation on request. The bridge hands
 * it an already connected socket (--connectionFd=N), so that the server never
 * listens and no other process can reach it; started by hand, it listens on
 * --port (0: ephemeral), prints the port as the first line of stdout and
 * accepts one connection.
 *
 * Three other modes:
 *   --info          one JSON line (software, ns-3 version, network kinds,
 *                   linked ns-3 modules) on stdout, exit 0; nothing is built.
 *   --check         validate every argument (topology files read), exit 0 or
 *                   2 with the first problem on stderr; nothing is built.
 *                   `netloop check` uses it to check a scenario's network.
 *   --standalone    ns-3 alone, no bridge: periodic flows (--standaloneFlows)
 *                   through the same applications and tags until --stopTime,
 *                   then one JSON line with per-flow counters and mean delays.
 *
 * Defaults: p2p, 2 nodes in a chain, 10Mbps, 2ms, device queue of 100
 * packets, no loss, seed 1, run 1, an ephemeral port, no traces.
 *
 * Reproducing a run: the same arguments (in particular --seed and --run) and
 * the same requests give the same results. Replications change --run, not
 * --seed. Any ns-3 attribute default can be set too, e.g.
 * --ns3::TcpSocket::SegmentSize=1448 (ns-3's CommandLine).
 *
 * Run by hand:  netloop-server --PrintHelp
 *               netloop-server --network=wave --nodes=4 --bsmNodes=all --run=3
 *               netloop-server --network=wifi --standalone \
 *                   --standaloneFlows="0>1:5000:100:10ms" --stopTime=10s
 *
 * Exit codes: 0 after Finish (or after --info / a standalone run); 1 when
 * serving fails (protocol error, the bridge closed or went silent, no
 * connection in time); 2 for a bad argument value. ns-3's own CommandLine
 * exits with 1 for an unknown argument or a value it cannot parse into the
 * argument's type.
 */
#include "lte-network.h"
#include "network-builder.h"
#include "p2p-network.h"
#include "serve.h"
#include "session.h"
#include "standalone.h"
#include "traces.h"
#include "wave-network.h"
#include "wifi-network.h"
#include "wire.h"

#include "ns3/command-line.h"
#include "ns3/core-module.h"
#include "ns3/version-defines.h"

#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#ifndef NETLOOP_NS3_MODULES
#define NETLOOP_NS3_MODULES ""
#endif

using namespace netloop;

namespace
{

/// The --info line.
std::string
InfoJson(const std::vector<std::unique_ptr<NetworkBuilder>>& builders)
{
    std::ostringstream os;
    os << "{\"software\":" << JsonString(ServerSoftware()) << ",\"ns3_version\":\""
       << NS3_VERSION_MAJOR << "." << NS3_VERSION_MINOR << "\",\"networks\":[";
    for (std::size_t i = 0; i < builders.size(); ++i)
    {
        os << (i ? "," : "") << JsonString(builders[i]->GetName());
    }
    os << "],\"transports\":[\"udp\",\"tcp\"],\"traces\":[\"pcap\",\"ascii\",\"flowMonitor\","
          "\"netanim\",\"dropLog\"],\"modules\":[";
    std::stringstream modules(NETLOOP_NS3_MODULES);
    std::string module;
    bool first = true;
    while (std::getline(modules, module, ','))
    {
        if (!module.empty())
        {
            os << (first ? "" : ",") << JsonString(module);
            first = false;
        }
    }
    os << "]}";
    return os.str();
}

/// --standalone: runs the flows on the built network, prints the JSON line.
int
RunStandaloneMode(const BuiltNetwork& built,
                  const ServeArguments& serve,
                  const std::vector<StandaloneFlow>& flows,
                  uint64_t stopNs,
                  double buildWallSeconds)
{
    TraceSession traces(serve.traces);
    if (auto problem = traces.Start())
    {
        return BadArgument(*problem);
    }
    std::variant<StandaloneResult, wire::Error> outcome;
    {
        StepEngine engine(built.nodes, built.addressOf, built.description);
        engine.SetDropLog(traces.GetDropLog());
        engine.HookDrops(built.hookDrops);
        outcome = RunStandalone(engine, flows, stopNs);
        traces.Finish();
    }
    if (built.onFinish)
    {
        built.onFinish();
    }
    if (auto* error = std::get_if<wire::Error>(&outcome))
    {
        if (error->code == wire::ErrorCode::InvalidConfig)
        {
            return BadArgument("--standaloneFlows: " + error->message);
        }
        std::cerr << "netloop-server: standalone run failed: " << wire::ToString(error->code)
                  << ": " << error->message << std::endl;
        return 1;
    }
    std::cout << StandaloneJson(built.description,
                                flows,
                                stopNs,
                                std::get<StandaloneResult>(outcome),
                                buildWallSeconds)
              << std::endl;
    return 0;
}

} // namespace

int
main(int argc, char* argv[])
{
    // A write to a closed connection must be an error we report, not a signal.
    std::signal(SIGPIPE, SIG_IGN);

    // Defaults.
    std::string network = "p2p";
    uint32_t nodeCount = 0;
    bool info = false;
    bool check = false;
    bool standalone = false;
    std::string standaloneFlows;
    // Durations are strings parsed exactly (wire::ParseDuration, the grammar of the
    // Rust side) rather than ns3::Time: Time's parser goes through double and aborts
    // on an unknown unit, and a typo on the command line must be an error message.
    std::string stopTime = "60s";
    ServeArguments serve;
    NetworkRequest request;

    // Network kinds.
    std::vector<std::unique_ptr<NetworkBuilder>> builders;
    builders.push_back(std::make_unique<P2pNetworkBuilder>());
    builders.push_back(std::make_unique<WifiNetworkBuilder>());
    builders.push_back(std::make_unique<WaveNetworkBuilder>());
    builders.push_back(std::make_unique<LteNetworkBuilder>());
    std::string kinds;
    for (const auto& b : builders)
    {
        kinds += (kinds.empty() ? "" : ", ") + b->GetName();
    }

    // Command line.
    ns3::CommandLine cmd(__FILE__);
    cmd.Usage("ns-3 stepping server for netloop: builds a network and serves it to the netloop "
              "bridge over TCP on 127.0.0.1: a connection handed over (--connectionFd) or one "
              "accepted on --port. The first line of stdout is the port number. "
              "Arguments tagged [kind] apply to that network kind only.");
    cmd.AddValue("network", "kind of network: " + kinds, network);
    cmd.AddValue("nodes",
                 "number of addressable nodes, indexed 0..nodes-1 in flows (lte: the UEs, then "
                 "the remote host); 0 = the kind's default (2; lte: --ues + 1)",
                 nodeCount);
    cmd.AddValue("info",
                 "print one JSON line (software, ns-3 version, network kinds, ns-3 modules) and "
                 "exit",
                 info);
    cmd.AddValue("check",
                 "validate every argument (reading topology files), build nothing, and exit: "
                 "0 when valid, 2 with the first problem on stderr",
                 check);
    cmd.AddValue("standalone",
                 "run ns-3 alone, without the bridge: the --standaloneFlows until --stopTime, "
                 "then one JSON summary line on stdout",
                 standalone);
    cmd.AddValue("standaloneFlows",
                 "standalone flows, \"src>dst:port:size:period[:start[:udp|tcp]]\" separated by "
                 "';' (node indices, bytes, times with unit), e.g. 0>1:5000:100:10ms",
                 standaloneFlows);
    cmd.AddValue("stopTime", "standalone: simulated time to run, with unit", stopTime);
    serve.AddArguments(cmd);
    request.placement.AddArguments(cmd);
    request.background.AddArguments(cmd);
    request.radio.AddArguments(cmd);
    for (auto& builder : builders)
    {
        builder->AddArguments(cmd);
    }
    cmd.Parse(argc, argv);

    if (info)
    {
        std::cout << InfoJson(builders) << std::endl;
        return 0;
    }

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
        return BadArgument("--network=" + network + " is not a network kind; use " + kinds);
    }
    if (auto problem = serve.Validate())
    {
        return BadArgument(*problem);
    }
    request.nodeCount = builder->ResolveNodeCount(nodeCount);
    if (auto problem = builder->Validate(request))
    {
        return BadArgument(*problem);
    }
    std::vector<StandaloneFlow> flows;
    uint64_t stopNs = 0;
    if (standalone)
    {
        auto parsed = ParseStandaloneFlows(standaloneFlows);
        if (auto* problem = std::get_if<std::string>(&parsed))
        {
            return BadArgument(*problem);
        }
        flows = std::get<std::vector<StandaloneFlow>>(parsed);
        std::string error;
        if (!wire::ParseDuration(stopTime, &stopNs, &error))
        {
            return BadArgument("--stopTime=" + stopTime + ": " + error);
        }
    }

    if (check)
    {
        return 0;
    }

    // Random numbers: seed and run first, then explicit streams while building.
    serve.ApplySeed();

    // Network.
    const auto buildStart = std::chrono::steady_clock::now();
    BuiltNetwork built = builder->Build(request, 0);
    const double buildWallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - buildStart).count();
    std::clog << "netloop-server: " << built.description << " (seed " << serve.seed << ", run "
              << serve.run << ")" << std::endl;

    // Serve (or run alone), then clean up.
    const int status = standalone ? RunStandaloneMode(built, serve, flows, stopNs, buildWallSeconds)
                                  : Serve(built, serve);
    ns3::Simulator::Destroy();
    return status;
}
