/*
 * Network builders: each kind of network (point-to-point now; Wi-Fi, WAVE and
 * LTE later) is one builder behind the server's --network switch. The server
 * core never sees how a network was built: it serves the nodes it is given.
 */
#ifndef NETLOOP_NETWORK_BUILDER_H
#define NETLOOP_NETWORK_BUILDER_H

#include "step-engine.h"

#include "ns3/command-line.h"
#include "ns3/node-container.h"

#include <cstdint>
#include <optional>
#include <string>

namespace netloop
{

/// A built network, ready to be served.
struct BuiltNetwork
{
    ns3::NodeContainer nodes; //!< the nodes the bridge names, by index
    AddressOf addressOf;      //!< where flows to each node are sent
    std::string description;  //!< one line for Configured and logs
};

/**
 * \brief Builds one kind of network from command-line arguments.
 *
 * To add a kind: implement this interface in its own file and register an
 * instance in programs/netloop-server.cc. Arguments are registered on the
 * server's single ns-3 CommandLine, so --PrintHelp lists them all.
 */
class NetworkBuilder
{
  public:
    virtual ~NetworkBuilder() = default;
    /// \return the --network value that selects this builder, e.g. "p2p"
    virtual std::string GetName() const = 0;
    /// Registers this kind's arguments (AddValue with units in the description).
    virtual void AddArguments(ns3::CommandLine& cmd) = 0;
    /**
     * Checks the parsed arguments.
     * \param nodeCount the requested number of nodes
     * \return nullopt if they are valid, else a message naming the argument
     */
    virtual std::optional<std::string> Validate(uint32_t nodeCount) const = 0;
    /**
     * Builds the network; Validate() must have passed. RngSeedManager seed and
     * run must be set before; random variables get streams from stream upwards.
     * \param nodeCount number of nodes
     * \param stream first random stream index to assign
     * \return the network
     */
    virtual BuiltNetwork Build(uint32_t nodeCount, int64_t stream) = 0;
};

} // namespace netloop

#endif // NETLOOP_NETWORK_BUILDER_H
