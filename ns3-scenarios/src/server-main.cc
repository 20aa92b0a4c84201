/*
 * The netloop-server program, as a function of its network kinds: the
 * shipped server (programs/netloop-server.cc) passes the four kinds of this
 * library; a test or a user may pass more (tests/toy-kind-server.cc).
 */
#include "server-main.h"

#include "checked-command-line.h"
#include "serve.h"
#include "session.h"
#include "standalone.h"
#include "traces.h"
#include "wire.h"

#include "ns3/core-module.h"
#include "ns3/version-defines.h"

#include <chrono>
#include <csignal>
#include <iostream>
#include <sstream>

namespace netloop
{

namespace
{

/**
 * The shared tables (radio, placement, background, traces), declared once
 * and bound to the options they fill: registered on the command line, told
 * by --describe and checked against the kind's use of them.
 */
class SharedTables
{
  public:
    SharedTables(NetworkRequest& request, TraceOptions& traces)
    {
        request.radio.DeclareArguments(m_radio);
        request.placement.DeclareArguments(m_placement);
        request.background.DeclareArguments(m_background);
        traces.DeclareArguments(m_traces);
    }

    /// Registers every table but traces (ServeArguments registers those).
    void Register(CheckedCommandLine& cmd) const
    {
        m_radio.Register(cmd, "radio");
        m_placement.Register(cmd, "placement");
        m_background.Register(cmd, "background");
    }

    /// \return the tables, in the scenario's order
    std::vector<TableDescription> Describe() const
    {
        return {
            {"radio",
             "The radio of the nodes: transmit power and propagation loss (wifi, wave); "
             "lte takes the propagation keys only.",
             "radio",
             false,
             &m_radio},
            {"placement", "Where the nodes are at t = 0.", "node placement", false, &m_placement},
            {"background",
             "Extra (\"redundant\") nodes that load the channel: each sends UDP (port 9) to a "
             "sink.",
             "background traffic",
             true,
             &m_background},
            {"traces",
             "ns-3 trace files, written into the run directory's ns3/ folder; all off by "
             "default.",
             "trace files",
             true,
             &m_traces},
        };
    }

  private:
    ArgumentTable m_radio;      //!< RadioOptions
    ArgumentTable m_placement;  //!< PlacementOptions
    ArgumentTable m_background; //!< BackgroundOptions
    ArgumentTable m_traces;     //!< TraceOptions
};

/// The --info line.
std::string
InfoJson(const std::vector<std::unique_ptr<NetworkBuilder>>& builders,
         const std::string& ns3Modules)
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
    std::stringstream modules(ns3Modules);
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
ServerMain(int argc,
           char* argv[],
           std::vector<std::unique_ptr<NetworkBuilder>> builders,
           const std::string& ns3Modules)
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

    bool describe = false;
    std::string kinds;
    for (const auto& b : builders)
    {
        kinds += (kinds.empty() ? "" : ", ") + b->GetName();
    }

    // Command line: a problem ns-3's CommandLine would print with its help
    // (exit 1) is ours to report, naming the argument (exit 2).
    CheckedCommandLine cmd(__FILE__);
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
    cmd.AddValue("describe",
                 "print the schema of every network kind as one JSON line (arguments with their "
                 "scenario keys, types, units, defaults and limits) and exit",
                 describe);
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
    serve.AddArguments(cmd); // the traces table too, as for a user's own program
    SharedTables shared(request, serve.traces);
    shared.Register(cmd);
    for (auto& builder : builders)
    {
        builder->AddArguments(cmd);
    }
    if (auto problem = cmd.Parse(argc, argv))
    {
        return BadArgument(*problem);
    }

    if (info)
    {
        std::cout << InfoJson(builders, ns3Modules) << std::endl;
        return 0;
    }
    if (describe)
    {
        std::vector<KindDescription> described;
        for (const auto& b : builders)
        {
            described.push_back(b->Describe());
        }
        std::cout << DescribeJson(shared.Describe(), described) << std::endl;
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
        return BadArgument(
            ArgumentProblem{"network",
                            "--network=" + network + " is not a network kind; use " + kinds});
    }
    if (auto problem = serve.Validate())
    {
        return BadArgument(*problem);
    }
    for (const auto& table : shared.Describe())
    {
        if (auto problem = CheckTableUse(table, builder->GetTableUses(), network))
        {
            return BadArgument(*problem);
        }
    }
    request.nodeCount = builder->ResolveNodeCount(nodeCount);
    if (auto problem = builder->Check(request))
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

} // namespace netloop
