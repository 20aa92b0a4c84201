/*
 * What the Wi-Fi and WAVE builders share: the node layout (control nodes,
 * background nodes, a sink), the IP stack on one /16, neighbour caches,
 * background traffic and the drop hooks.
 */
#ifndef NETLOOP_WIRELESS_COMMON_H
#define NETLOOP_WIRELESS_COMMON_H

#include "background-traffic.h"
#include "network-builder.h"
#include "radio.h"

#include "ns3/ipv4-interface-container.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/vector.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace netloop
{

/**
 * \brief The nodes of a single-channel wireless network.
 *
 * Index space (also the node index of drops): control nodes 0..N-1 (the
 * addressable ones), background nodes N..N+B-1, then, when B > 0, the
 * background sink N+B, placed at the centroid of the control nodes.
 */
struct WirelessNodes
{
    ns3::NodeContainer control;         //!< addressable, indices 0..N-1
    ns3::NodeContainer background;      //!< background senders
    ns3::NodeContainer all;             //!< control, background, sink
    ns3::Ptr<ns3::Node> sink;           //!< background sink, or null
    std::vector<ns3::Vector> positions; //!< of every node in `all`
};

/// What every single-channel wireless kind takes besides its own options.
struct WirelessRequest
{
    RadioParameters radio;           //!< log-distance unless --propagation says
    BackgroundParameters background; //!< background traffic nodes
};

/**
 * Parses and checks the radio and background-traffic options of a
 * single-channel wireless kind (Friis, log-distance, two-ray ground,
 * Nakagami or range propagation; log-distance by default) and its node
 * count: at least one control node, and control, background nodes and the
 * sink within one /16 subnet.
 * eturn the parameters, or a message naming the argument
 */
std::variant<WirelessRequest, std::string> ParseWirelessRequest(const NetworkRequest& request);

/**
 * Creates the nodes (in index order, so that their ns-3 ids follow it in a
 * fresh simulation) with constant-velocity mobility at their positions.
 * \param positions control then background positions (ResolvePositions)
 */
WirelessNodes CreateWirelessNodes(uint32_t control,
                                  uint32_t background,
                                  const std::vector<ns3::Vector>& positions);

/**
 * The common second half of a Wi-Fi or WAVE build, once the devices exist
 * (one per node of nodes.all, in order): internet stack, addresses in
 * 10.1.0.0/16 in index order, neighbour caches (static ARP), background
 * traffic, random streams of the stack, and the drop hook (Wi-Fi/WAVE device
 * traces and ARP on every node).
 *
 * \param stream advanced past the streams used
 * \return the network, without description; interfaces are written to *interfaces
 */
BuiltNetwork FinishWirelessNetwork(const WirelessNodes& nodes,
                                   const ns3::NetDeviceContainer& devices,
                                   const RadioParameters& radio,
                                   const BackgroundParameters& background,
                                   int64_t* stream,
                                   ns3::Ipv4InterfaceContainer* interfaces);

/// The WifiMode names valid for 802.11p (10 MHz OFDM).
const std::vector<std::string>& Wave80211pModes();

/// "a, b, c" of a list of names.
std::string JoinNames(const std::vector<std::string>& names);

} // namespace netloop

#endif // NETLOOP_WIRELESS_COMMON_H
