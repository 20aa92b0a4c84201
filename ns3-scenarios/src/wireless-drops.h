/*
 * Drop traces of Wi-Fi and WAVE devices and of ARP, with the rule that makes
 * wireless drops honest: a control packet is reported lost only where it
 * really dies (MAC gives up after its retries, a queue overflows, address
 * resolution fails), never for a failed attempt the MAC retries or a frame a
 * third node overhears. Those PHY events are observations for the drop log.
 */
#ifndef NETLOOP_WIRELESS_DROPS_H
#define NETLOOP_WIRELESS_DROPS_H

#include "drop-traces.h"

#include "ns3/net-device.h"
#include "ns3/node-container.h"
#include "ns3/node.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"
#include "ns3/wifi-mac.h"
#include "ns3/wifi-mpdu.h"
#include "ns3/wifi-phy-common.h"

namespace netloop
{

/// Name of a PHY reception failure, e.g. "PREAMBLE_DETECT_FAILURE".
const char* ToString(ns3::WifiPhyRxfailureReason reason);
/// Name of a MAC drop reason, e.g. "WIFI_MAC_DROP_REACHED_RETRY_LIMIT".
const char* ToString(ns3::WifiMacDropReason reason);
/// The DropReason of a MAC drop: retry limit -> Mac, queue full / expired -> Queue.
wire::DropReason ToDropReason(ns3::WifiMacDropReason reason);

/**
 * \brief Makes the retry-limit drops of an OCB MAC visible.
 *
 * ns-3.37's OcbWifiMac builds its own frame exchange manager and never gives
 * it a dropped-MPDU callback, so an MPDU discarded after the retry limit
 * vanishes without any trace. InstallOcbDropRelays() gives each OCB frame
 * exchange manager a relay, aggregated to the MAC, whose "DroppedMpdu" trace
 * source fires instead (hooked by HookWifiDrops).
 */
class MpduDropRelay : public ns3::Object
{
  public:
    /// \return the TypeId
    static ns3::TypeId GetTypeId();
    /// Fires the trace source.
    void Notify(ns3::WifiMacDropReason reason, ns3::Ptr<const ns3::WifiMpdu> mpdu);

  private:
    /// DroppedMpdu
    ns3::TracedCallback<ns3::WifiMacDropReason, ns3::Ptr<const ns3::WifiMpdu>> m_dropped;
};

/**
 * Installs an MpduDropRelay on every OcbWifiMac of a WifiNetDevice or
 * WaveNetDevice (no-op for other MACs).
 */
void InstallOcbDropRelays(ns3::Ptr<ns3::NetDevice> device);

/**
 * The drop traces of a WifiNetDevice (ad hoc, OCB) or WaveNetDevice:
 *
 * - fatal: WifiMac "DroppedMpdu" (retry limit: Mac; queue full, lifetime
 *   expired: Queue; old QoS packet: Other) and "MacTxDrop" (Mac), the relay of
 *   InstallOcbDropRelays(), each MAC queue's "DropBeforeEnqueue" and "Expired"
 *   (Queue);
 * - observations, only with observations = true (for the drop log): WifiPhy
 *   "PhyRxDrop" (with the WifiPhyRxfailureReason), "PhyTxDrop", and the PHY
 *   state's "RxError" (payload decoding failed), all Phy.
 *
 * \return the number of trace sources connected
 */
uint32_t HookWifiDrops(ns3::Ptr<ns3::NetDevice> device,
                       uint32_t nodeIndex,
                       DropSink* sink,
                       DropTraceConnections& connections,
                       bool observations);

/**
 * ARP: ArpL3Protocol "Drop" (no usable entry: resolution failed, or its
 * pending queue is full) and each interface's ArpCache "Drop" (no reply
 * after the retries), both fatal and Routing (the next hop is unreachable,
 * like EHOSTUNREACH).
 * \return the number of trace sources connected
 */
uint32_t HookArpDrops(ns3::Ptr<ns3::Node> node,
                      uint32_t nodeIndex,
                      DropSink* sink,
                      DropTraceConnections& connections);

/**
 * A CSMA device: MacTxDrop (queue full) and the device queue's "Drop" are
 * Queue, PhyTxDrop (backoff attempts exhausted) is Mac, PhyRxDrop (receive
 * error model) is Phy; all fatal.
 * \return the number of trace sources connected
 */
uint32_t HookCsmaDrops(ns3::Ptr<ns3::NetDevice> device,
                       uint32_t nodeIndex,
                       DropSink* sink,
                       DropTraceConnections& connections);

/**
 * The drop traces of every device of a user's nodes that netloop knows
 * (Wi-Fi and WAVE devices, after InstallOcbDropRelays; CSMA devices) and ARP
 * (point-to-point devices are hooked by HookStandardDrops already); node
 * index = position in the container.
 * \return the number of trace sources connected
 */
uint32_t HookDeviceDrops(const ns3::NodeContainer& nodes,
                         DropSink* sink,
                         DropTraceConnections& connections,
                         bool observations);

} // namespace netloop

#endif // NETLOOP_WIRELESS_DROPS_H
