#include "wireless-drops.h"

#include "ns3/arp-cache.h"
#include "ns3/arp-l3-protocol.h"
#include "ns3/csma-net-device.h"
#include "ns3/frame-exchange-manager.h"
#include "ns3/ipv4-interface.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/log.h"
#include "ns3/ocb-wifi-mac.h"
#include "ns3/qos-txop.h"
#include "ns3/txop.h"
#include "ns3/wave-net-device.h"
#include "ns3/wifi-mac-queue.h"
#include "ns3/wifi-net-device.h"
#include "ns3/wifi-phy-state-helper.h"
#include "ns3/wifi-phy.h"

#include <vector>

namespace netloop
{

NS_LOG_COMPONENT_DEFINE("NetloopWirelessDrops");

NS_OBJECT_ENSURE_REGISTERED(MpduDropRelay);

using ns3::Ptr;

const char*
ToString(ns3::WifiPhyRxfailureReason reason)
{
    switch (reason)
    {
    case ns3::UNKNOWN:
        return "UNKNOWN";
    case ns3::UNSUPPORTED_SETTINGS:
        return "UNSUPPORTED_SETTINGS";
    case ns3::CHANNEL_SWITCHING:
        return "CHANNEL_SWITCHING";
    case ns3::RXING:
        return "RXING";
    case ns3::TXING:
        return "TXING";
    case ns3::SLEEPING:
        return "SLEEPING";
    case ns3::POWERED_OFF:
        return "POWERED_OFF";
    case ns3::TRUNCATED_TX:
        return "TRUNCATED_TX";
    case ns3::BUSY_DECODING_PREAMBLE:
        return "BUSY_DECODING_PREAMBLE";
    case ns3::PREAMBLE_DETECT_FAILURE:
        return "PREAMBLE_DETECT_FAILURE";
    case ns3::RECEPTION_ABORTED_BY_TX:
        return "RECEPTION_ABORTED_BY_TX";
    case ns3::L_SIG_FAILURE:
        return "L_SIG_FAILURE";
    case ns3::HT_SIG_FAILURE:
        return "HT_SIG_FAILURE";
    case ns3::SIG_A_FAILURE:
        return "SIG_A_FAILURE";
    case ns3::SIG_B_FAILURE:
        return "SIG_B_FAILURE";
    case ns3::U_SIG_FAILURE:
        return "U_SIG_FAILURE";
    case ns3::EHT_SIG_FAILURE:
        return "EHT_SIG_FAILURE";
    case ns3::PREAMBLE_DETECTION_PACKET_SWITCH:
        return "PREAMBLE_DETECTION_PACKET_SWITCH";
    case ns3::FRAME_CAPTURE_PACKET_SWITCH:
        return "FRAME_CAPTURE_PACKET_SWITCH";
    case ns3::OBSS_PD_CCA_RESET:
        return "OBSS_PD_CCA_RESET";
    case ns3::HE_TB_PPDU_TOO_LATE:
        return "HE_TB_PPDU_TOO_LATE";
    case ns3::FILTERED:
        return "FILTERED";
    case ns3::DMG_HEADER_FAILURE:
        return "DMG_HEADER_FAILURE";
    case ns3::DMG_ALLOCATION_ENDED:
        return "DMG_ALLOCATION_ENDED";
    }
    return "UNKNOWN";
}

const char*
ToString(ns3::WifiMacDropReason reason)
{
    switch (reason)
    {
    case ns3::WIFI_MAC_DROP_FAILED_ENQUEUE:
        return "WIFI_MAC_DROP_FAILED_ENQUEUE";
    case ns3::WIFI_MAC_DROP_EXPIRED_LIFETIME:
        return "WIFI_MAC_DROP_EXPIRED_LIFETIME";
    case ns3::WIFI_MAC_DROP_REACHED_RETRY_LIMIT:
        return "WIFI_MAC_DROP_REACHED_RETRY_LIMIT";
    case ns3::WIFI_MAC_DROP_QOS_OLD_PACKET:
        return "WIFI_MAC_DROP_QOS_OLD_PACKET";
    }
    return "WIFI_MAC_DROP_UNKNOWN";
}

wire::DropReason
ToDropReason(ns3::WifiMacDropReason reason)
{
    switch (reason)
    {
    case ns3::WIFI_MAC_DROP_REACHED_RETRY_LIMIT:
        return wire::DropReason::Mac;
    case ns3::WIFI_MAC_DROP_FAILED_ENQUEUE:
    case ns3::WIFI_MAC_DROP_EXPIRED_LIFETIME:
        return wire::DropReason::Queue;
    case ns3::WIFI_MAC_DROP_QOS_OLD_PACKET:
        break;
    }
    return wire::DropReason::Other;
}

ns3::TypeId
MpduDropRelay::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("netloop::MpduDropRelay")
            .SetParent<ns3::Object>()
            .SetGroupName("Netloop")
            .AddTraceSource("DroppedMpdu",
                            "An MPDU discarded by the frame exchange manager (retry limit)",
                            ns3::MakeTraceSourceAccessor(&MpduDropRelay::m_dropped),
                            "ns3::WifiMac::DroppedMpduCallback");
    return tid;
}

void
MpduDropRelay::Notify(ns3::WifiMacDropReason reason, Ptr<const ns3::WifiMpdu> mpdu)
{
    m_dropped(reason, mpdu);
}

namespace
{

/// Every MAC of a Wi-Fi or WAVE device.
std::vector<Ptr<ns3::WifiMac>>
MacsOf(Ptr<ns3::NetDevice> device)
{
    std::vector<Ptr<ns3::WifiMac>> macs;
    if (auto wave = ns3::DynamicCast<ns3::WaveNetDevice>(device))
    {
        for (const auto& [channel, mac] : wave->GetMacs())
        {
            macs.push_back(mac);
        }
    }
    else if (auto wifi = ns3::DynamicCast<ns3::WifiNetDevice>(device))
    {
        macs.push_back(wifi->GetMac());
    }
    return macs;
}

/// Every PHY of a Wi-Fi or WAVE device.
std::vector<Ptr<ns3::WifiPhy>>
PhysOf(Ptr<ns3::NetDevice> device)
{
    std::vector<Ptr<ns3::WifiPhy>> phys;
    if (auto wave = ns3::DynamicCast<ns3::WaveNetDevice>(device))
    {
        phys = wave->GetPhys();
    }
    else if (auto wifi = ns3::DynamicCast<ns3::WifiNetDevice>(device))
    {
        phys.push_back(wifi->GetPhy());
    }
    return phys;
}

/// The MAC queues of a MAC: the DCF's, or one per access category.
std::vector<Ptr<ns3::WifiMacQueue>>
QueuesOf(Ptr<ns3::WifiMac> mac)
{
    std::vector<Ptr<ns3::WifiMacQueue>> queues;
    if (mac->GetQosSupported())
    {
        for (ns3::AcIndex ac : {ns3::AC_BE, ns3::AC_BK, ns3::AC_VI, ns3::AC_VO})
        {
            if (Ptr<ns3::QosTxop> txop = mac->GetQosTxop(ac))
            {
                queues.push_back(txop->GetWifiMacQueue());
            }
        }
    }
    else if (Ptr<ns3::Txop> txop = mac->GetTxop())
    {
        queues.push_back(txop->GetWifiMacQueue());
    }
    return queues;
}

ns3::Callback<void, ns3::WifiMacDropReason, Ptr<const ns3::WifiMpdu>>
MacDropCallback(DropSink* sink, uint32_t nodeIndex, const char* source)
{
    return ns3::Callback<void, ns3::WifiMacDropReason, Ptr<const ns3::WifiMpdu>>(
        [sink, nodeIndex, source](ns3::WifiMacDropReason reason, Ptr<const ns3::WifiMpdu> mpdu) {
            sink->ObserveDrop(mpdu->GetPacket(),
                              nodeIndex,
                              ToDropReason(reason),
                              DropOrigin{source, ToString(reason), true});
        });
}

ns3::Callback<void, Ptr<const ns3::WifiMpdu>>
QueueDropCallback(DropSink* sink, uint32_t nodeIndex, const DropOrigin& origin)
{
    return ns3::Callback<void, Ptr<const ns3::WifiMpdu>>(
        [sink, nodeIndex, origin](Ptr<const ns3::WifiMpdu> mpdu) {
            sink->ObserveDrop(mpdu->GetPacket(), nodeIndex, wire::DropReason::Queue, origin);
        });
}

} // namespace

void
InstallOcbDropRelays(Ptr<ns3::NetDevice> device)
{
    for (Ptr<ns3::WifiMac> mac : MacsOf(device))
    {
        if (!ns3::DynamicCast<ns3::OcbWifiMac>(mac) || mac->GetObject<MpduDropRelay>())
        {
            continue;
        }
        Ptr<ns3::FrameExchangeManager> fem = mac->GetFrameExchangeManager();
        if (!fem)
        {
            continue;
        }
        auto relay = ns3::CreateObject<MpduDropRelay>();
        fem->SetDroppedMpduCallback(ns3::MakeCallback(&MpduDropRelay::Notify, relay));
        mac->AggregateObject(relay);
    }
}

uint32_t
HookWifiDrops(Ptr<ns3::NetDevice> device,
              uint32_t nodeIndex,
              DropSink* sink,
              DropTraceConnections& connections,
              bool observations)
{
    uint32_t hooked = 0;
    for (Ptr<ns3::WifiMac> mac : MacsOf(device))
    {
        hooked += connections.Connect(mac,
                                      "DroppedMpdu",
                                      MacDropCallback(sink, nodeIndex, "WifiMac::DroppedMpdu"));
        hooked += connections.Connect(
            mac,
            "MacTxDrop",
            PacketDropCallback(sink,
                               nodeIndex,
                               wire::DropReason::Mac,
                               DropOrigin{"WifiMac::MacTxDrop", "refused before queueing", true}));
        if (Ptr<MpduDropRelay> relay = mac->GetObject<MpduDropRelay>())
        {
            hooked += connections.Connect(
                relay,
                "DroppedMpdu",
                MacDropCallback(sink, nodeIndex, "FrameExchangeManager::DroppedMpdu"));
        }
        for (Ptr<ns3::WifiMacQueue> queue : QueuesOf(mac))
        {
            hooked += connections.Connect(
                queue,
                "DropBeforeEnqueue",
                QueueDropCallback(
                    sink,
                    nodeIndex,
                    DropOrigin{"WifiMacQueue::DropBeforeEnqueue", "MAC queue full", true}));
            hooked += connections.Connect(
                queue,
                "Expired",
                QueueDropCallback(sink,
                                  nodeIndex,
                                  DropOrigin{"WifiMacQueue::Expired",
                                             "MSDU lifetime expired in the MAC queue",
                                             true}));
        }
    }
    if (!observations)
    {
        return hooked;
    }
    for (Ptr<ns3::WifiPhy> phy : PhysOf(device))
    {
        ns3::Callback<void, Ptr<const ns3::Packet>, ns3::WifiPhyRxfailureReason> rxDrop(
            [sink, nodeIndex](Ptr<const ns3::Packet> packet, ns3::WifiPhyRxfailureReason reason) {
                sink->ObserveDrop(packet,
                                  nodeIndex,
                                  wire::DropReason::Phy,
                                  DropOrigin{"WifiPhy::PhyRxDrop", ToString(reason), false});
            });
        hooked += connections.Connect(phy, "PhyRxDrop", rxDrop);
        hooked += connections.Connect(
            phy,
            "PhyTxDrop",
            PacketDropCallback(
                sink,
                nodeIndex,
                wire::DropReason::Phy,
                DropOrigin{"WifiPhy::PhyTxDrop", "the PHY could not transmit", false}));
        ns3::Callback<void, Ptr<const ns3::Packet>, double> rxError(
            [sink, nodeIndex](Ptr<const ns3::Packet> packet, double) {
                sink->ObserveDrop(
                    packet,
                    nodeIndex,
                    wire::DropReason::Phy,
                    DropOrigin{"WifiPhyStateHelper::RxError", "payload decoding failed", false});
            });
        hooked += connections.Connect(phy->GetState(), "RxError", rxError);
    }
    return hooked;
}

uint32_t
HookArpDrops(Ptr<ns3::Node> node,
             uint32_t nodeIndex,
             DropSink* sink,
             DropTraceConnections& connections)
{
    uint32_t hooked = 0;
    if (Ptr<ns3::ArpL3Protocol> arp = node->GetObject<ns3::ArpL3Protocol>())
    {
        hooked += connections.Connect(
            arp,
            "Drop",
            PacketDropCallback(sink,
                               nodeIndex,
                               wire::DropReason::Routing,
                               DropOrigin{"ArpL3Protocol::Drop",
                                          "no usable ARP entry or ARP pending queue full",
                                          true}));
    }
    if (Ptr<ns3::Ipv4L3Protocol> ipv4 = node->GetObject<ns3::Ipv4L3Protocol>())
    {
        for (uint32_t i = 0; i < ipv4->GetNInterfaces(); ++i)
        {
            Ptr<ns3::ArpCache> cache = ipv4->GetInterface(i)->GetArpCache();
            if (!cache)
            {
                continue;
            }
            hooked += connections.Connect(
                cache,
                "Drop",
                PacketDropCallback(
                    sink,
                    nodeIndex,
                    wire::DropReason::Routing,
                    DropOrigin{"ArpCache::Drop", "no ARP reply after the retries", true}));
        }
    }
    return hooked;
}

uint32_t
HookCsmaDrops(Ptr<ns3::NetDevice> device,
              uint32_t nodeIndex,
              DropSink* sink,
              DropTraceConnections& connections)
{
    auto csma = ns3::DynamicCast<ns3::CsmaNetDevice>(device);
    if (!csma)
    {
        return 0;
    }

    struct Source
    {
        const char* name;
        wire::DropReason reason;
        DropOrigin origin;
    };

    const Source sources[] = {
        {"MacTxDrop",
         wire::DropReason::Queue,
         {"CsmaNetDevice::MacTxDrop", "device queue full", true}},
        {"PhyTxDrop",
         wire::DropReason::Mac,
         {"CsmaNetDevice::PhyTxDrop", "backoff attempts exhausted", true}},
        {"PhyRxDrop",
         wire::DropReason::Phy,
         {"CsmaNetDevice::PhyRxDrop", "receive error model", true}},
    };
    uint32_t hooked = 0;
    for (const Source& s : sources)
    {
        hooked += connections.Connect(csma,
                                      s.name,
                                      PacketDropCallback(sink, nodeIndex, s.reason, s.origin));
    }
    if (Ptr<ns3::Queue<ns3::Packet>> queue = csma->GetQueue())
    {
        hooked += connections.Connect(
            queue,
            "Drop",
            PacketDropCallback(sink,
                               nodeIndex,
                               wire::DropReason::Queue,
                               DropOrigin{"DropTailQueue::Drop", "device queue full", true}));
    }
    return hooked;
}

uint32_t
HookDeviceDrops(const ns3::NodeContainer& nodes,
                DropSink* sink,
                DropTraceConnections& connections,
                bool observations)
{
    uint32_t hooked = 0;
    for (uint32_t i = 0; i < nodes.GetN(); ++i)
    {
        Ptr<ns3::Node> node = nodes.Get(i);
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            Ptr<ns3::NetDevice> device = node->GetDevice(d);
            if (ns3::DynamicCast<ns3::WifiNetDevice>(device))
            {
                InstallOcbDropRelays(device);
                hooked += HookWifiDrops(device, i, sink, connections, observations);
            }
            hooked += HookCsmaDrops(device, i, sink, connections);
        }
        hooked += HookArpDrops(node, i, sink, connections);
    }
    return hooked;
}

} // namespace netloop
