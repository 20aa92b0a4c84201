/*
 * Network builders: each kind of network (point-to-point, Wi-Fi, WAVE, LTE)
 * is one builder behind the server's --network switch. The server core never
 * sees how a network was built: it serves the nodes it is given, plus the
 * drop traces the builder knows how to hook.
 */
#ifndef NETLOOP_NETWORK_BUILDER_H
#define NETLOOP_NETWORK_BUILDER_H

#include "background-traffic.h"
#include "checked-command-line.h"
#include "drop-traces.h"
#include "network-schema.h"
#include "placement.h"
#include "radio.h"
#include "step-engine.h"

#include "ns3/node-container.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace netloop
{

/**
 * Hooks the drop trace sources of a network kind (beyond HookStandardDrops,
 * which the engine always hooks) for a sink. With observations = true it also
 * hooks the sources that only feed the drop log (e.g. Wi-Fi PHY receive
 * failures). Node indices are the builder's: the served nodes first, then any
 * extra nodes it documents.
 * \return the number of trace sources connected
 */
using DropHook =
    std::function<uint32_t(DropSink* sink, DropTraceConnections& connections, bool observations)>;

/// A built network, ready to be served.
struct BuiltNetwork
{
    ns3::NodeContainer nodes; //!< the nodes the bridge names, by index
    AddressOf addressOf;      //!< where flows to each node are sent
    std::string description;  //!< one line for Configured and logs
    DropHook hookDrops;       //!< the kind's own drop traces; may be empty
    /// Objects that must live as long as the simulation (helpers that keep
    /// pointers into themselves, statistics); released after the run.
    std::shared_ptr<void> keepAlive;
    /// Called once when the run ends (e.g. to log statistics); may be empty.
    std::function<void()> onFinish;
};

/// What every builder is asked to build: the node count and the shared options.
struct NetworkRequest
{
    uint32_t nodeCount = 2;       //!< addressable nodes (0 = the kind's default)
    PlacementOptions placement;   //!< positions
    BackgroundOptions background; //!< background traffic nodes
    RadioOptions radio;           //!< Wi-Fi and WAVE radio
};

/**
 * \brief Builds one kind of network from command-line arguments.
 *
 * To add a kind: implement this interface in its own file and register an
 * instance in programs/netloop-server.cc. Its arguments are declared once
 * (DeclareArguments: name, scenario key, unit, default, limits, help) and
 * registered on the server's single ns-3 CommandLine, so --PrintHelp lists
 * them all, Check() enforces their limits and --describe tells the bridge;
 * nothing on the bridge's side needs to change. Options several kinds share
 * (placement, background traffic, radio, traces) are declared once, as
 * shared tables (SharedTables), registered once by the server and passed in
 * the NetworkRequest; a kind says which of them it takes (GetTableUses).
 */
class NetworkBuilder
{
  public:
    virtual ~NetworkBuilder() = default;
    /// \return the --network value that selects this builder, e.g. "p2p"
    virtual std::string GetName() const = 0;
    /// \return one paragraph on what this kind builds (for --describe)
    virtual std::string GetDoc() const = 0;

    /// \return whether node positions matter (radio propagation)
    virtual bool UsesPositions() const
    {
        return true;
    }

    /// \return how the node count is set (default: --nodes, from the highest node used)
    virtual NodeCountRule GetNodeCountRule() const
    {
        return NodeCountRule{};
    }

    /**
     * The shared tables this kind takes (kSharedTables): by default a kind
     * with positions takes them all, one without (links) only placement and
     * traces. A kind that takes part of a table says so here; the server
     * and the bridge refuse the rest (CheckTableUse).
     */
    virtual std::vector<TableUse> GetTableUses() const
    {
        if (UsesPositions())
        {
            return {TableUse::Whole("radio"),
                    TableUse::Whole("placement"),
                    TableUse::Whole("background"),
                    TableUse::Whole("traces")};
        }
        return {TableUse::Whole("placement"), TableUse::Whole("traces")};
    }

    /// Declares this kind's arguments, each bound to the option it fills.
    virtual void DeclareArguments(ArgumentTable& table) = 0;

    /// Declares the arguments and registers them on `cmd`, tagged with the kind.
    void AddArguments(CheckedCommandLine& cmd)
    {
        m_arguments = ArgumentTable();
        DeclareArguments(m_arguments);
        m_arguments.Register(cmd, GetName());
    }

    /// What --describe says of this kind (AddArguments must have run).
    KindDescription Describe() const
    {
        return KindDescription{GetName(),
                               GetDoc(),
                               UsesPositions(),
                               GetNodeCountRule(),
                               &m_arguments,
                               GetTableUses()};
    }

    /**
     * Checks the parsed arguments: the declared limits first, then the
     * kind's own Validate(), then the node count against its rule's maximum.
     * \return nullopt if they are valid, else the problem and its argument
     */
    std::optional<ArgumentProblem> Check(const NetworkRequest& request) const
    {
        if (auto problem = m_arguments.Check())
        {
            return problem;
        }
        if (auto message = Validate(request))
        {
            return ArgumentProblem::FromMessage(*message);
        }
        const NodeCountRule rule = GetNodeCountRule();
        const uint32_t counted = request.nodeCount - std::min(request.nodeCount, rule.extra);
        if (counted > rule.max)
        {
            return ArgumentProblem{rule.argument,
                                   "--" + rule.argument + "=" + std::to_string(counted) +
                                       " is more than " + std::to_string(rule.max)};
        }
        return std::nullopt;
    }

    /**
     * The number of addressable nodes for a requested count (0 = the kind's
     * default); the count in the request passed to Validate/Build is this.
     */
    virtual uint32_t ResolveNodeCount(uint32_t requested) const = 0;
    /**
     * Checks the parsed arguments.
     * \return nullopt if they are valid, else a message naming the argument
     */
    virtual std::optional<std::string> Validate(const NetworkRequest& request) const = 0;
    /**
     * Builds the network; Validate() must have passed. RngSeedManager seed and
     * run must be set before; random variables get streams from stream upwards.
     * \param request node count (resolved) and shared options
     * \param stream first random stream index to assign
     * \return the network
     */
    virtual BuiltNetwork Build(const NetworkRequest& request, int64_t stream) = 0;

  private:
    ArgumentTable m_arguments; //!< declared by DeclareArguments, bound to this builder
};

} // namespace netloop

#endif // NETLOOP_NETWORK_BUILDER_H
