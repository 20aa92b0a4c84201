/*
 * LTE with EPC (PointToPointEpcHelper): UEs attached to eNBs, a remote host
 * behind the PGW. ns-3.37 mainline has no LTE sidelink, so every flow goes
 * through the infrastructure: UE -> eNB -> SGW -> PGW -> remote host, and
 * UE-to-UE flows up to the PGW and back down.
 */
#ifndef NETLOOP_LTE_NETWORK_H
#define NETLOOP_LTE_NETWORK_H

#include "network-builder.h"

#include "ns3/data-rate.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace netloop
{

/// Command-line values of an LTE network, as typed.
struct LteOptions
{
    uint32_t ues = 0;                           //!< 0: --nodes - 1
    uint32_t enbs = 1;                          //!< eNB count
    std::string enbPositions;                   //!< "x,y,z;..."; empty: eNB k at (500 k, 0, 0)
    std::string scheduler = "pf";               //!< MAC scheduler
    uint32_t bandwidth = 25;                    //!< resource blocks, uplink and downlink
    double enbTxPower = 30.0;                   //!< dBm
    double ueTxPower = 10.0;                    //!< dBm
    std::string s1uLinkDataRate = "10Gbps";     //!< eNB - SGW
    std::string s1uLinkDelay = "0s";            //!< eNB - SGW
    std::string s5LinkDataRate = "10Gbps";      //!< SGW - PGW
    std::string s5LinkDelay = "0s";             //!< SGW - PGW
    std::string remoteHostDataRate = "100Gbps"; //!< PGW - remote host
    std::string remoteHostDelay = "10ms";       //!< PGW - remote host
};

/// Validated LTE parameters.
struct LteParameters
{
    uint32_t ues = 1;
    uint32_t enbs = 1;
    std::vector<ns3::Vector> enbPositions;
    std::string scheduler = "pf";
    std::string schedulerType = "ns3::PfFfMacScheduler";
    uint32_t bandwidth = 25;
    double enbTxPower = 30.0;
    double ueTxPower = 10.0;
    ns3::DataRate s1uLinkDataRate = ns3::DataRate("10Gbps");
    uint64_t s1uLinkDelayNs = 0;
    ns3::DataRate s5LinkDataRate = ns3::DataRate("10Gbps");
    uint64_t s5LinkDelayNs = 0;
    ns3::DataRate remoteHostDataRate = ns3::DataRate("100Gbps");
    uint64_t remoteHostDelayNs = 10000000;
    RadioParameters radio; //!< only the propagation choice and its parameters
    BackgroundParameters background;
    std::vector<std::string> rateTexts; //!< s1u, s5, remote host rates as typed
};

/// How LTE uses the shared radio table: propagation settings only, three models.
TableUse LteRadioUse();

/**
 * Parses and checks the options against the request: the UE count is
 * nodeCount - 1 (the last addressable node is the remote host); --ues, when
 * given, must agree.
 * \return the parameters, or a message naming the argument
 */
std::variant<LteParameters, std::string> ParseLteOptions(const LteOptions& options,
                                                         const NetworkRequest& request);

/**
 * Builds the network.
 * \param positions UE then background UE positions
 */
BuiltNetwork BuildLteNetwork(const LteParameters& parameters,
                             const std::vector<ns3::Vector>& positions,
                             int64_t stream);

/**
 * \brief --network=lte: LTE with EPC, a remote host behind the PGW.
 *
 * Addressable nodes: UEs 0..U-1, then the remote host U (so --nodes = U + 1).
 * Not addressable, but named by index in drop reports: eNB k is U + 1 + k, the
 * PGW U + 1 + M, the SGW U + 2 + M (M eNBs). Background nodes are extra UEs
 * sending uplink to the remote host.
 *
 * Each UE attaches to its closest eNB at t = 0; its default EPS bearer is up
 * some 20 ms later (ideal RRC). A packet sent earlier is reported dropped,
 * Routing: uplink at the UE (its NAS is not ACTIVE yet), downlink at the PGW
 * (no bearer to the UE yet). RLC UM transmission buffer overflows are Queue
 * drops at the UE (uplink) or the eNB (downlink); the EPC's point-to-point
 * links and IP stacks report as in p2p networks. Not reported: a transport
 * block lost after the HARQ retransmissions (the RLC discards the partial SDU
 * without a trace source), so such a packet stays in flight.
 */
class LteNetworkBuilder : public NetworkBuilder
{
  public:
    std::string GetName() const override;
    std::string GetDoc() const override;
    /// --ues, plus the remote host.
    NodeCountRule GetNodeCountRule() const override;
    std::vector<TableUse> GetTableUses() const override;
    void DeclareArguments(ArgumentTable& table) override;
    /// 0 -> --ues + 1 (--ues 0: 1 UE and the remote host).
    uint32_t ResolveNodeCount(uint32_t requested) const override;
    std::optional<std::string> Validate(const NetworkRequest& request) const override;
    BuiltNetwork Build(const NetworkRequest& request, int64_t stream) override;

  private:
    LteOptions m_options; //!< command-line values
};

} // namespace netloop

#endif // NETLOOP_LTE_NETWORK_H
