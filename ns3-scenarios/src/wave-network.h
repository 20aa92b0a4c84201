/*
 * WAVE / IEEE 802.11p vehicular networks: OCB MACs through the 802.11p
 * helper, or WaveNetDevices (IEEE 1609.4 channel access) through the WAVE
 * helper; optional BSM background traffic from ns-3's WAVE BSM helper.
 */
#ifndef NETLOOP_WAVE_NETWORK_H
#define NETLOOP_WAVE_NETWORK_H

#include "network-builder.h"
#include "wireless-builder.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace netloop
{

/// Which MAC the nodes use.
enum class WaveMac
{
    Ocb,  //!< Wifi80211pHelper: one OcbWifiMac per node, no channel switching
    Wave, //!< WaveHelper: a WaveNetDevice with 1609.4 channel access, IP on SCH1
};

/// Command-line values of a WAVE network, as typed.
struct WaveOptions
{
    std::string mac = "ocb";                  //!< ocb or wave
    std::string channelAccess = "continuous"; //!< wave: continuous or alternating
    std::string bsmNodes = "none";            //!< "none", "all" or "0,1,2"
    double bsmRate = 10.0;                    //!< BSMs per second per node
    uint32_t bsmSize = 200;                   //!< bytes
    double bsmRange = 50.0;                   //!< m, for ns-3's BSM statistics
    std::string bsmTxMaxDelay = "10ms";       //!< BSM random transmit delay bound
};

/// Validated WAVE parameters.
struct WaveParameters
{
    WaveMac mac = WaveMac::Ocb;
    bool alternating = false; //!< wave: alternating CCH/SCH access
    std::string phyMode = "OfdmRate6MbpsBW10MHz";
    std::vector<uint32_t> bsmNodes; //!< indices into all WAVE nodes
    bool bsmAll = false;            //!< every WAVE node sends BSMs
    double bsmRate = 10.0;
    uint32_t bsmSize = 200;
    double bsmRange = 50.0;
    uint64_t bsmTxMaxDelayNs = 10000000;
    RadioParameters radio;
    BackgroundParameters background;
};

/// Parses and checks the options; a message naming the argument on failure.
std::variant<WaveParameters, std::string> ParseWaveOptions(const WaveOptions& options,
                                                           const NetworkRequest& request);

/**
 * Builds the network (index space as WirelessNodes: control nodes, background
 * nodes, sink).
 * \param positions control then background positions
 */
BuiltNetwork BuildWaveNetwork(const WaveParameters& parameters,
                              uint32_t nodeCount,
                              const std::vector<ns3::Vector>& positions,
                              int64_t stream);

/**
 * \brief --network=wave: IEEE 802.11p (10 MHz OFDM at 5.9 GHz).
 *
 * ocb: Wifi80211pHelper with NqosWaveMacHelper (OcbWifiMac, plain DCF),
 * constant rate --phyMode for data, control and broadcast frames.
 *
 * wave: WaveHelper with QosWaveMacHelper and YansWavePhyHelper: a
 * WaveNetDevice per node with a MAC per WAVE channel on one PHY; IP traffic
 * (control flows, background, BSMs) goes on SCH1 (172) with continuous access,
 * or alternating CCH/SCH access (50 ms each, 4 ms guard: packets wait for the
 * SCH interval). Two workarounds for ns-3.37 are applied: the frame exchange
 * managers get the MAC address WaveHelper assigns after creating them (else
 * unicast frames are never acknowledged), and the transmit profile is
 * adaptable (a fixed one sends 10 MHz modes with a 20 MHz TXVECTOR after a
 * channel switch, which receivers drop).
 *
 * In both, unicast data frames are acknowledged and retried (NORMAL_ACK), so
 * a lost control packet is reported once, as Mac, when the MAC gives up.
 */
class WaveNetworkBuilder
    : public WirelessNetworkBuilder<WaveOptions, WaveParameters, ParseWaveOptions, BuildWaveNetwork>
{
  public:
    std::string GetName() const override;
    std::string GetDoc() const override;
    void DeclareArguments(ArgumentTable& table) override;
};

} // namespace netloop

#endif // NETLOOP_WAVE_NETWORK_H
