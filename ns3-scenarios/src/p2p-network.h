/*
 * Point-to-point networks: a chain or a star of N nodes joined by
 * point-to-point links of one data rate and delay.
 */
#ifndef NETLOOP_P2P_NETWORK_H
#define NETLOOP_P2P_NETWORK_H

#include "network-builder.h"

#include "ns3/data-rate.h"

#include <string>
#include <variant>

namespace netloop
{

/// How the nodes are joined.
enum class P2pTopology
{
    Chain, //!< 0 - 1 - 2 - ... - (N-1)
    Star,  //!< node 0 is the hub, linked to every other node
};

/// Command-line values of a point-to-point network, as typed.
struct P2pOptions
{
    std::string topology = "chain";  //!< "chain" or "star"
    std::string dataRate = "10Mbps"; //!< ns-3 DataRate string
    std::string delay = "2ms";       //!< propagation delay per link
    uint32_t queueSize = 100;        //!< device transmit queue, packets
    double lossRate = 0.0;           //!< receive error model, per packet
};

/// Validated parameters of a point-to-point network.
struct P2pParameters
{
    P2pTopology topology = P2pTopology::Chain;
    ns3::DataRate dataRate = ns3::DataRate("10Mbps");
    uint64_t delayNs = 2000000;
    uint32_t queueSize = 100;
    double lossRate = 0.0;
    std::string dataRateText = "10Mbps"; //!< as typed, for the description
};

/// Parses and checks the options; a message naming the argument on failure.
std::variant<P2pParameters, std::string> ParseP2pOptions(const P2pOptions& options,
                                                         uint32_t nodeCount);

/**
 * Builds the network (see P2pNetworkBuilder for the layout and the queueing).
 * \param parameters validated parameters
 * \param nodeCount number of nodes (at least 2)
 * \param stream first random stream index to assign
 */
BuiltNetwork BuildP2pNetwork(const P2pParameters& parameters, uint32_t nodeCount, int64_t stream);

/**
 * \brief --network=p2p: a chain or star of point-to-point links.
 *
 * Every link has the same data rate and delay, and its own /30 subnet in
 * 10.0.0.0/8; global routing fills the routing tables. A node's address (the
 * one flows to it are sent to) is the address of its first link.
 *
 * Queueing: the devices are built without flow control, so traffic control
 * installs no root queue disc and hands every packet straight to the device:
 * the only queue is the device's DropTail transmit queue of --queueSize
 * packets (plus the packet being transmitted). An overflow is dropped at that
 * queue: TxQueue "Drop" (then MacTxDrop for the same packet), reported once,
 * as Queue.
 *
 * Loss: with --lossRate > 0, every device gets a RateErrorModel (packet unit)
 * as its receive error model: each packet arriving over a link is lost with
 * that probability, independently per hop; reported as Phy (PhyRxDrop).
 *
 * Timing: a packet of S payload bytes takes (S + 8 UDP + 20 IP + 2 PPP) * 8 / R
 * to transmit and d to propagate, per hop, store and forward.
 */
class P2pNetworkBuilder : public NetworkBuilder
{
  public:
    std::string GetName() const override;
    std::string GetDoc() const override;
    /// Links have a fixed delay: positions only place nodes for NetAnim.
    bool UsesPositions() const override;
    /// --nodes, at least 2.
    NodeCountRule GetNodeCountRule() const override;
    void DeclareArguments(ArgumentTable& table) override;
    /// 0 -> 2.
    uint32_t ResolveNodeCount(uint32_t requested) const override;
    /// The p2p options, no background nodes (p2p links are not shared), valid positions.
    std::optional<std::string> Validate(const NetworkRequest& request) const override;
    /// BuildP2pNetwork, then the positions (which only NetAnim sees: links have a fixed delay).
    BuiltNetwork Build(const NetworkRequest& request, int64_t stream) override;

  private:
    P2pOptions m_options; //!< command-line values
};

} // namespace netloop

#endif // NETLOOP_P2P_NETWORK_H
