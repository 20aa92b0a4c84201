/*
 * Helpers for the network tests: building a network kind in-process, driving
 * a StepEngine on it, and summarising the results.
 */
#ifndef NETLOOP_NET_TEST_UTIL_H
#define NETLOOP_NET_TEST_UTIL_H

#include "checked-command-line.h"
#include "lte-network.h"
#include "network-builder.h"
#include "p2p-network.h"
#include "step-engine.h"
#include "wave-network.h"
#include "wifi-network.h"
#include "wire.h"

#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"

#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <vector>

namespace netloop
{
namespace test
{

constexpr uint64_t kMs = 1000000;
constexpr uint64_t kS = 1000000000;

inline wire::FlowSpec
UdpFlow(uint32_t id, uint16_t port, uint32_t src, uint32_t dst, bool stop = false)
{
    return wire::FlowSpec{id, port, src, dst, wire::Transport::Udp, stop};
}

inline wire::FlowSpec
TcpFlow(uint32_t id, uint16_t port, uint32_t src, uint32_t dst)
{
    return wire::FlowSpec{id, port, src, dst, wire::Transport::Tcp, false};
}

/// What a run produced, over all its steps.
struct RunLog
{
    std::vector<wire::Delivery> deliveries;
    std::vector<wire::DropEvent> drops;
    wire::Summary summary;

    /// Deliveries of one flow.
    std::vector<wire::Delivery> Of(uint32_t flow) const
    {
        std::vector<wire::Delivery> out;
        for (const auto& d : deliveries)
        {
            if (d.flow == flow)
            {
                out.push_back(d);
            }
        }
        return out;
    }

    /// Mean delay of a flow's deliveries, ns (0 if none).
    double MeanDelay(uint32_t flow) const
    {
        double sum = 0;
        std::size_t n = 0;
        for (const auto& d : deliveries)
        {
            if (d.flow == flow)
            {
                sum += double(d.received - d.sent);
                ++n;
            }
        }
        return n ? sum / n : 0.0;
    }
};

/**
 * \brief A network and an engine on it, rebuilt from scratch by Build().
 *
 * Tear-down order: the engine (it disconnects its traces), the simulator,
 * then what the builder kept alive.
 */
class NetHarness
{
  public:
    ~NetHarness()
    {
        Reset();
    }

    void Reset()
    {
        m_engine.reset();
        ns3::Simulator::Destroy();
        m_built = BuiltNetwork{};
    }

    /// Seeds, builds with the function given, and puts an engine (with drop hooks) on it.
    StepEngine& Build(const std::function<BuiltNetwork()>& build,
                      uint32_t seed = 1,
                      uint64_t run = 1,
                      DropLog* log = nullptr)
    {
        Reset();
        ns3::RngSeedManager::SetSeed(seed);
        ns3::RngSeedManager::SetRun(run);
        m_built = build();
        m_engine =
            std::make_unique<StepEngine>(m_built.nodes, m_built.addressOf, m_built.description);
        m_engine->SetDropLog(log);
        m_engine->HookDrops(m_built.hookDrops);
        return *m_engine;
    }

    StepEngine& Engine()
    {
        return *m_engine;
    }

    const BuiltNetwork& Built() const
    {
        return m_built;
    }

    void Configure(std::vector<wire::FlowSpec> flows)
    {
        auto r = m_engine->Configure(wire::Configure{std::move(flows)});
        if (auto* e = std::get_if<wire::Error>(&r))
        {
            FAIL() << "Configure failed: " << e->message;
        }
    }

    /// One step; appends to the log.
    wire::StepDone Step(const wire::Step& step, RunLog* log = nullptr)
    {
        auto r = m_engine->Step(step);
        if (auto* e = std::get_if<wire::Error>(&r))
        {
            ADD_FAILURE() << "Step failed: " << wire::ToString(e->code) << ": " << e->message;
            return wire::StepDone{};
        }
        wire::StepDone done = std::get<wire::StepDone>(r);
        if (log)
        {
            log->deliveries.insert(log->deliveries.end(),
                                   done.deliveries.begin(),
                                   done.deliveries.end());
            log->drops.insert(log->drops.end(), done.drops.begin(), done.drops.end());
        }
        return done;
    }

    /**
     * Periodic sends on the given flows (one packet per flow per period, from
     * `start`, sizes per flow), stepped every `sync` until `stop`; a callback
     * may add kinematics to each step before it runs.
     */
    RunLog RunPeriodic(const std::vector<uint32_t>& sizes,
                       uint64_t period,
                       uint64_t sync,
                       uint64_t stop,
                       uint64_t start = 0,
                       const std::function<void(wire::Step&)>& each = {})
    {
        RunLog log;
        std::vector<uint64_t> next(sizes.size(), 0);
        uint64_t now = m_engine->GetNow();
        while (now < stop)
        {
            wire::Step step;
            step.until = std::min(stop, now + sync);
            for (uint32_t f = 0; f < sizes.size(); ++f)
            {
                for (;;)
                {
                    const uint64_t t = start + next[f] * period;
                    if (t > step.until || t >= stop)
                    {
                        break;
                    }
                    if (t >= now)
                    {
                        step.sends.push_back(wire::SendRequest{f, next[f], 0, 1, t, sizes[f]});
                    }
                    ++next[f];
                }
            }
            std::stable_sort(step.sends.begin(),
                             step.sends.end(),
                             [](const auto& a, const auto& b) { return a.time < b.time; });
            if (each)
            {
                each(step);
            }
            now = Step(step, &log).reached;
        }
        log.summary = m_engine->Finish();
        return log;
    }

  private:
    BuiltNetwork m_built;
    std::unique_ptr<StepEngine> m_engine;
};

/**
 * \brief Command-line arguments parsed the way netloop-server parses them
 * (e.g. {"--network=wave", "--nodes=2", "--positions=0,0,0;10,0,0"}); a value
 * CheckedCommandLine refuses is a Rejection() too.
 */
class ServerArgs
{
  public:
    explicit ServerArgs(const std::vector<std::string>& args)
    {
        m_builders.push_back(std::make_unique<P2pNetworkBuilder>());
        m_builders.push_back(std::make_unique<WifiNetworkBuilder>());
        m_builders.push_back(std::make_unique<WaveNetworkBuilder>());
        m_builders.push_back(std::make_unique<LteNetworkBuilder>());
        CheckedCommandLine cmd;
        cmd.AddValue("network", "kind", m_network);
        cmd.AddValue("nodes", "nodes", m_nodes);
        m_request.placement.AddArguments(cmd);
        m_request.background.AddArguments(cmd);
        m_request.radio.AddArguments(cmd);
        for (auto& b : m_builders)
        {
            b->AddArguments(cmd);
        }
        std::vector<std::string> argv = {"net-test"};
        argv.insert(argv.end(), args.begin(), args.end());
        m_commandLineProblem = cmd.Parse(argv);
        for (auto& b : m_builders)
        {
            if (b->GetName() == m_network)
            {
                m_builder = b.get();
                m_request.nodeCount = b->ResolveNodeCount(m_nodes);
            }
        }
    }

    /// The builder's message for these arguments; empty if they are valid.
    std::string Rejection() const
    {
        if (m_commandLineProblem)
        {
            return m_commandLineProblem->message;
        }
        if (!m_builder)
        {
            return "no network kind " + m_network;
        }
        auto problem = m_builder->Check(m_request);
        return problem ? problem->message : "";
    }

    /// The network; a rejection is a test failure (and an empty network).
    BuiltNetwork Build()
    {
        const std::string problem = Rejection();
        if (!problem.empty())
        {
            ADD_FAILURE() << "rejected: " << problem;
            return BuiltNetwork{};
        }
        return m_builder->Build(m_request, 0);
    }

  private:
    std::optional<ArgumentProblem> m_commandLineProblem; //!< what CheckedCommandLine found
    std::string m_network = "p2p";
    uint32_t m_nodes = 0;
    NetworkRequest m_request;
    std::vector<std::unique_ptr<NetworkBuilder>> m_builders;
    NetworkBuilder* m_builder = nullptr;
};

/// The network these server arguments build.
inline BuiltNetwork
BuildFromArgs(const std::vector<std::string>& args)
{
    return ServerArgs(args).Build();
}

/// The message a builder gives for these arguments (empty if they are valid).
inline std::string
RejectionOf(const std::vector<std::string>& args)
{
    return ServerArgs(args).Rejection();
}

/// "x,y,z;x,y,z" for nodes on the x axis.
inline std::string
OnXAxis(const std::vector<double>& xs)
{
    std::string out;
    for (double x : xs)
    {
        out += (out.empty() ? "" : ";") + std::to_string(x) + ",0,0";
    }
    return out;
}

} // namespace test
} // namespace netloop

#endif // NETLOOP_NET_TEST_UTIL_H
