/*
 * Wi-Fi ad hoc networks (802.11a/b/g/n): one YansWifiChannel, every node an
 * AdhocWifiMac station.
 */
#ifndef NETLOOP_WIFI_NETWORK_H
#define NETLOOP_WIFI_NETWORK_H

#include "network-builder.h"
#include "wireless-builder.h"

#include "ns3/wifi-standards.h"

#include <string>
#include <variant>
#include <vector>

namespace netloop
{

/// Command-line values of a Wi-Fi network, as typed.
struct WifiOptions
{
    std::string standard = "80211a";      //!< 80211a, 80211b, 80211g, 80211n
    std::string band;                     //!< 80211n: 2.4GHz or 5GHz; empty: the standard's
    std::string rateManager = "constant"; //!< constant, ideal, arf, aarf, minstrel, minstrelHt
    uint32_t channelWidth = 0;            //!< MHz; 0: the standard's (20; 22 for 802.11b)
};

/// Validated Wi-Fi parameters.
struct WifiParameters
{
    ns3::WifiStandard standard = ns3::WIFI_STANDARD_80211a;
    std::string standardName = "80211a";
    bool band5GHz = true;
    uint32_t channelWidth = 20;
    std::string phyMode = "OfdmRate6Mbps";   //!< data mode (constant rate manager)
    std::string basicMode = "OfdmRate6Mbps"; //!< control frames (constant rate manager)
    std::string rateManager = "constant";
    std::string rateManagerType = "ns3::ConstantRateWifiManager";
    RadioParameters radio;
    BackgroundParameters background;
};

/// Parses and checks the options; a message naming the argument on failure.
std::variant<WifiParameters, std::string> ParseWifiOptions(const WifiOptions& options,
                                                           const NetworkRequest& request);

/**
 * Builds the network: N control nodes, background nodes and sink (see
 * WirelessNodes for the index space), all on one channel in 10.1.0.0/16.
 * \param positions control then background positions
 */
BuiltNetwork BuildWifiNetwork(const WifiParameters& parameters,
                              uint32_t nodeCount,
                              const std::vector<ns3::Vector>& positions,
                              int64_t stream);

/**
 * \brief --network=wifi: an ad hoc Wi-Fi network.
 *
 * Every node has one WifiNetDevice with an AdhocWifiMac on a YansWifiChannel
 * (constant-speed propagation delay, the chosen loss model), the same tx
 * power, and the chosen rate manager. Control flows are unicast UDP or TCP in
 * one IPv4 subnet: one hop, acknowledged and retried by the MAC.
 */
class WifiNetworkBuilder
    : public WirelessNetworkBuilder<WifiOptions, WifiParameters, ParseWifiOptions, BuildWifiNetwork>
{
  public:
    std::string GetName() const override;
    std::string GetDoc() const override;
    void DeclareArguments(ArgumentTable& table) override;
};

} // namespace netloop

#endif // NETLOOP_WIFI_NETWORK_H
