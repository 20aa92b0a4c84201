#include "lte-network.h"

#include "background-traffic.h"

#include "ns3/config.h"
#include "ns3/constant-position-mobility-model.h"
#include "ns3/double.h"
#include "ns3/epc-pgw-application.h"
#include "ns3/epc-ue-nas.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-generator.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-static-routing-helper.h"
#include "ns3/log.h"
#include "ns3/lte-enb-net-device.h"
#include "ns3/lte-enb-rrc.h"
#include "ns3/lte-helper.h"
#include "ns3/lte-radio-bearer-info.h"
#include "ns3/lte-rlc.h"
#include "ns3/lte-ue-net-device.h"
#include "ns3/lte-ue-rrc.h"
#include "ns3/node-list.h"
#include "ns3/object-map.h"
#include "ns3/point-to-point-epc-helper.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_set>

namespace netloop
{

NS_LOG_COMPONENT_DEFINE("NetloopLteNetwork");

using ns3::Ptr;

namespace
{

/// Downlink carrier of the default EARFCN (100): 2120 MHz, for an "auto" reference loss.
constexpr double kDefaultDlFrequencyHz = 2120e6;

struct Scheduler
{
    const char* name;
    const char* type;
};

const Scheduler kSchedulers[] = {
    {"pf", "ns3::PfFfMacScheduler"},
    {"rr", "ns3::RrFfMacScheduler"},
    {"fdmt", "ns3::FdMtFfMacScheduler"},
    {"tdmt", "ns3::TdMtFfMacScheduler"},
    {"tta", "ns3::TtaFfMacScheduler"},
    {"fdbet", "ns3::FdBetFfMacScheduler"},
    {"tdbet", "ns3::TdBetFfMacScheduler"},
    {"fdtbfq", "ns3::FdTbfqFfMacScheduler"},
    {"tdtbfq", "ns3::TdTbfqFfMacScheduler"},
    {"pss", "ns3::PssFfMacScheduler"},
    {"cqa", "ns3::CqaFfMacScheduler"},
};

std::optional<std::string>
ParseRate(const std::string& name, const std::string& text, ns3::DataRate* rate)
{
    ns3::DataRateValue value;
    if (!value.DeserializeFromString(text, ns3::MakeDataRateChecker()) ||
        value.Get().GetBitRate() == 0)
    {
        return "--" + name + "=" + text + " is not a positive data rate; write e.g. 10Gbps";
    }
    *rate = value.Get();
    return std::nullopt;
}

std::optional<std::string>
ParseDelay(const std::string& name, const std::string& text, uint64_t* ns)
{
    std::string error;
    if (!wire::ParseDuration(text, ns, &error))
    {
        return "--" + name + "=" + text + ": " + error;
    }
    if (*ns > uint64_t(std::numeric_limits<int64_t>::max()))
    {
        return "--" + name + "=" + text + " is longer than ns-3 can represent";
    }
    return std::nullopt;
}

/**
 * Reports the two silent losses of an EPC as Routing drops: uplink packets a
 * UE sends before its NAS is ACTIVE (EpcUeNas::Send refuses them), and
 * downlink packets the PGW cannot map to a bearer (RecvFromTunDevice drops
 * them). The PGW case is detected by deferral: a packet that entered the PGW
 * application from the tun device and did not leave through the PGW's IP
 * stack by the end of that instant's event was dropped.
 */
class LteDropWatch : public std::enable_shared_from_this<LteDropWatch>
{
  public:
    LteDropWatch(DropSink* sink, uint32_t pgwIndex)
        : m_sink(sink),
          m_pgwIndex(pgwIndex)
    {
    }

    void OnTunRx(Ptr<ns3::Packet> packet)
    {
        m_pending.insert(packet->GetUid());
        auto self = shared_from_this();
        Ptr<const ns3::Packet> seen = packet;
        ns3::Simulator::ScheduleNow([self, seen]() { self->Check(seen); });
    }

    void OnPgwTx(Ptr<const ns3::Packet> packet)
    {
        m_pending.erase(packet->GetUid());
    }

  private:
    void Check(Ptr<const ns3::Packet> packet)
    {
        if (m_pending.erase(packet->GetUid()) > 0)
        {
            m_sink->ObserveDrop(packet,
                                m_pgwIndex,
                                wire::DropReason::Routing,
                                DropOrigin{"EpcPgwApplication::RecvFromTunDevice",
                                           "no EPS bearer to the destination UE (not attached yet)",
                                           true});
        }
    }

    DropSink* m_sink;                       //!< where drops go
    uint32_t m_pgwIndex;                    //!< the PGW's node index
    std::unordered_set<uint64_t> m_pending; //!< uids seen from tun, not yet forwarded
};

/// The RLC entities already hooked, so that each is hooked once.
using HookedRlcs = std::shared_ptr<std::set<ns3::LteRlc*>>;

/**
 * Hooks the "TxDrop" of the RLC entity of every data radio bearer of an RRC
 * object ("DataRadioBearerMap") not hooked yet. RLC entities are created
 * during the run, when a bearer is set up, so this runs when the RRC
 * announces a new bearer ("DrbCreated"; the UE's passes the DRB id, the
 * eNB's the logical channel id, hence no matching on either).
 */
void
HookNewRlcs(Ptr<ns3::Object> rrc,
            uint32_t index,
            DropSink* sink,
            DropTraceConnections* connections,
            HookedRlcs hooked)
{
    // The bearer is in the map by the end of the event that announced it.
    ns3::Simulator::ScheduleNow([rrc, index, sink, connections, hooked]() {
        ns3::ObjectMapValue bearers;
        rrc->GetAttribute("DataRadioBearerMap", bearers);
        for (auto it = bearers.Begin(); it != bearers.End(); ++it)
        {
            auto info = ns3::DynamicCast<ns3::LteDataRadioBearerInfo>(it->second);
            if (!info || !info->m_rlc || !hooked->insert(ns3::PeekPointer(info->m_rlc)).second)
            {
                continue;
            }
            connections->Connect(
                info->m_rlc,
                "TxDrop",
                PacketDropCallback(
                    sink,
                    index,
                    wire::DropReason::Queue,
                    DropOrigin{"LteRlc::TxDrop", "RLC transmission buffer full", true}));
        }
    });
}

} // namespace

TableUse
LteRadioUse()
{
    // The eNBs and UEs set their powers themselves (enb_tx_power,
    // ue_tx_power); the LTE path loss is one of three models.
    TableUse radio;
    radio.table = "radio";
    radio.arguments = {"propagation",
                       "logDistanceExponent",
                       "referenceLoss",
                       "referenceDistance",
                       "antennaHeight"};
    radio.choices = {{"propagation", {"friis", "logDistance", "twoRayGround"}}};
    radio.note = "lte takes propagation settings only; set enb_tx_power and ue_tx_power in "
                 "[network.ns3]";
    return radio;
}

std::variant<LteParameters, std::string>
ParseLteOptions(const LteOptions& o, const NetworkRequest& request)
{
    LteParameters p;
    if (request.nodeCount < 2)
    {
        return "--nodes=" + std::to_string(request.nodeCount) +
               ": an LTE network has at least one UE and the remote host (--nodes >= 2)";
    }
    p.ues = request.nodeCount - 1;
    if (o.ues != 0 && o.ues != p.ues)
    {
        return "--ues=" + std::to_string(o.ues) +
               " does not fit --nodes=" + std::to_string(request.nodeCount) +
               ": the nodes are the UEs and the remote host, " +
               "so use --nodes=" + std::to_string(o.ues + 1) + " (or leave --nodes out)";
    }
    if (o.enbs == 0)
    {
        return std::string("--enbs=0: an LTE network needs at least one eNB");
    }
    p.enbs = o.enbs;
    auto enbPositions = ParsePositionList(o.enbPositions);
    if (auto* error = std::get_if<std::string>(&enbPositions))
    {
        return "--enbPositions: " + *error;
    }
    p.enbPositions = std::get<std::vector<ns3::Vector>>(enbPositions);
    if (p.enbPositions.empty())
    {
        for (uint32_t k = 0; k < p.enbs; ++k)
        {
            p.enbPositions.emplace_back(500.0 * k, 0.0, 0.0);
        }
    }
    else if (p.enbPositions.size() != p.enbs)
    {
        return "--enbPositions gives " + std::to_string(p.enbPositions.size()) +
               " positions for --enbs=" + std::to_string(p.enbs);
    }
    bool found = false;
    std::string names;
    for (const Scheduler& s : kSchedulers)
    {
        names += (names.empty() ? "" : ", ") + std::string(s.name);
        if (o.scheduler == s.name)
        {
            found = true;
            p.scheduler = s.name;
            p.schedulerType = s.type;
        }
    }
    if (!found)
    {
        return "--scheduler=" + o.scheduler + " is not an LTE MAC scheduler; use one of " + names;
    }
    // The bandwidth is one of 6, 15, 25, 50, 75, 100: a declared limit (DeclareArguments).
    p.bandwidth = o.bandwidth;
    if (!std::isfinite(o.enbTxPower) || !std::isfinite(o.ueTxPower))
    {
        return std::string("--enbTxPower and --ueTxPower must be finite powers in dBm");
    }
    p.enbTxPower = o.enbTxPower;
    p.ueTxPower = o.ueTxPower;
    if (auto e = ParseRate("s1uLinkDataRate", o.s1uLinkDataRate, &p.s1uLinkDataRate))
    {
        return *e;
    }
    if (auto e = ParseDelay("s1uLinkDelay", o.s1uLinkDelay, &p.s1uLinkDelayNs))
    {
        return *e;
    }
    if (auto e = ParseRate("s5LinkDataRate", o.s5LinkDataRate, &p.s5LinkDataRate))
    {
        return *e;
    }
    if (auto e = ParseDelay("s5LinkDelay", o.s5LinkDelay, &p.s5LinkDelayNs))
    {
        return *e;
    }
    if (auto e = ParseRate("remoteHostDataRate", o.remoteHostDataRate, &p.remoteHostDataRate))
    {
        return *e;
    }
    if (auto e = ParseDelay("remoteHostDelay", o.remoteHostDelay, &p.remoteHostDelayNs))
    {
        return *e;
    }
    p.rateTexts = {o.s1uLinkDataRate, o.s5LinkDataRate, o.remoteHostDataRate};
    // The models LTE supports are the ones its use of the radio table lists.
    std::vector<Propagation> models;
    // A named use: ChoicesOf points into it, so it must outlive the loop.
    const TableUse radioUse = LteRadioUse();
    for (const auto& name : *radioUse.ChoicesOf("propagation"))
    {
        models.push_back(ParsePropagation(name).value());
    }
    auto radio = ParseRadioOptions(request.radio, Propagation::Friis, models);
    if (auto* error = std::get_if<std::string>(&radio))
    {
        return *error;
    }
    p.radio = std::get<RadioParameters>(radio);
    auto background = ParseBackgroundOptions(request.background);
    if (auto* error = std::get_if<std::string>(&background))
    {
        return *error;
    }
    p.background = std::get<BackgroundParameters>(background);
    return p;
}

BuiltNetwork
BuildLteNetwork(const LteParameters& p, const std::vector<ns3::Vector>& positions, int64_t stream)
{
    NS_LOG_FUNCTION(p.ues << p.enbs << stream);
    ns3::Ipv4AddressGenerator::Reset();
    // The EPC helper builds its SGW-PGW link in its constructor: defaults first.
    ns3::Config::SetDefault("ns3::NoBackhaulEpcHelper::S5LinkDataRate",
                            ns3::DataRateValue(p.s5LinkDataRate));
    ns3::Config::SetDefault("ns3::NoBackhaulEpcHelper::S5LinkDelay",
                            ns3::TimeValue(ns3::NanoSeconds(p.s5LinkDelayNs)));
    ns3::Config::SetDefault("ns3::PointToPointEpcHelper::S1uLinkDataRate",
                            ns3::DataRateValue(p.s1uLinkDataRate));
    ns3::Config::SetDefault("ns3::PointToPointEpcHelper::S1uLinkDelay",
                            ns3::TimeValue(ns3::NanoSeconds(p.s1uLinkDelayNs)));
    ns3::Config::SetDefault("ns3::LteEnbPhy::TxPower", ns3::DoubleValue(p.enbTxPower));
    ns3::Config::SetDefault("ns3::LteUePhy::TxPower", ns3::DoubleValue(p.ueTxPower));

    auto lte = ns3::CreateObject<ns3::LteHelper>();
    auto epc = ns3::CreateObject<ns3::PointToPointEpcHelper>();
    lte->SetEpcHelper(epc);
    lte->SetSchedulerType(p.schedulerType);
    lte->SetEnbDeviceAttribute("DlBandwidth", ns3::UintegerValue(p.bandwidth));
    lte->SetEnbDeviceAttribute("UlBandwidth", ns3::UintegerValue(p.bandwidth));
    switch (p.radio.propagation)
    {
    case Propagation::LogDistance:
        lte->SetPathlossModelType(ns3::LogDistancePropagationLossModel::GetTypeId());
        lte->SetPathlossModelAttribute("Exponent", ns3::DoubleValue(p.radio.exponent));
        lte->SetPathlossModelAttribute("ReferenceDistance",
                                       ns3::DoubleValue(p.radio.referenceDistance));
        lte->SetPathlossModelAttribute(
            "ReferenceLoss",
            ns3::DoubleValue(p.radio.referenceLossDb
                                 ? *p.radio.referenceLossDb
                                 : FriisLossDb(p.radio.referenceDistance, kDefaultDlFrequencyHz)));
        break;
    case Propagation::TwoRayGround:
        lte->SetPathlossModelType(ns3::TwoRayGroundPropagationLossModel::GetTypeId());
        lte->SetPathlossModelAttribute("HeightAboveZ", ns3::DoubleValue(p.radio.antennaHeight));
        break;
    default:
        lte->SetPathlossModelType(ns3::FriisPropagationLossModel::GetTypeId());
        break;
    }

    // Remote host behind the PGW.
    Ptr<ns3::Node> pgw = epc->GetPgwNode();
    Ptr<ns3::Node> sgw = epc->GetSgwNode();
    ns3::NodeContainer remoteHost;
    remoteHost.Create(1);
    ns3::InternetStackHelper stack;
    stack.Install(remoteHost);
    ns3::PointToPointHelper link;
    link.SetDeviceAttribute("DataRate", ns3::DataRateValue(p.remoteHostDataRate));
    link.SetDeviceAttribute("Mtu", ns3::UintegerValue(1500));
    link.SetChannelAttribute("Delay", ns3::TimeValue(ns3::NanoSeconds(p.remoteHostDelayNs)));
    ns3::NetDeviceContainer internet = link.Install(pgw, remoteHost.Get(0));
    ns3::Ipv4AddressHelper internetAddresses("1.0.0.0", "255.0.0.0");
    ns3::Ipv4InterfaceContainer internetInterfaces = internetAddresses.Assign(internet);
    const ns3::Ipv4Address remoteHostAddress = internetInterfaces.GetAddress(1);
    ns3::Ipv4StaticRoutingHelper routing;
    routing.GetStaticRouting(remoteHost.Get(0)->GetObject<ns3::Ipv4>())
        ->AddNetworkRouteTo(ns3::Ipv4Address("7.0.0.0"), ns3::Ipv4Mask("255.0.0.0"), 1);

    // Radio access.
    ns3::NodeContainer enbs;
    enbs.Create(p.enbs);
    ns3::NodeContainer ues;
    ues.Create(p.ues);
    ns3::NodeContainer backgroundUes;
    backgroundUes.Create(p.background.nodes);
    ns3::NodeContainer allUes(ues, backgroundUes);
    InstallConstantVelocity(allUes, positions);
    for (uint32_t k = 0; k < p.enbs; ++k)
    {
        auto model = ns3::CreateObject<ns3::ConstantPositionMobilityModel>();
        model->SetPosition(p.enbPositions[k]);
        enbs.Get(k)->AggregateObject(model);
    }
    ns3::NetDeviceContainer enbDevices = lte->InstallEnbDevice(enbs);
    ns3::NetDeviceContainer ueDevices = lte->InstallUeDevice(allUes);
    stack.Install(allUes);
    epc->AssignUeIpv4Address(ueDevices);
    for (uint32_t i = 0; i < allUes.GetN(); ++i)
    {
        routing.GetStaticRouting(allUes.Get(i)->GetObject<ns3::Ipv4>())
            ->SetDefaultRoute(epc->GetUeDefaultGatewayAddress(), 1);
    }
    lte->AttachToClosestEnb(ueDevices, enbDevices);

    // Every node gets a position (NetAnim, and models that ask for one).
    for (uint32_t i = 0; i < ns3::NodeList::GetNNodes(); ++i)
    {
        Ptr<ns3::Node> node = ns3::NodeList::GetNode(i);
        if (!node->GetObject<ns3::MobilityModel>())
        {
            node->AggregateObject(ns3::CreateObject<ns3::ConstantPositionMobilityModel>());
        }
    }

    stream += lte->AssignStreams(enbDevices, stream);
    stream += lte->AssignStreams(ueDevices, stream);
    stream += epc->AssignStreams(stream);
    stream += InstallBackgroundTraffic(p.background,
                                       backgroundUes,
                                       remoteHost.Get(0),
                                       remoteHostAddress,
                                       stream);
    stream += stack.AssignStreams(allUes, stream);
    stream += stack.AssignStreams(remoteHost, stream);

    BuiltNetwork built;
    built.nodes.Add(ues);
    built.nodes.Add(remoteHost);
    built.addressOf = FirstInterfaceAddresses(built.nodes);
    built.keepAlive = std::make_shared<Ptr<ns3::LteHelper>>(lte);

    // Drop hooks: the EPC's silent losses, and the standard traces of the infrastructure.
    const uint32_t u = p.ues;
    const uint32_t pgwIndex = u + 1 + p.enbs;
    ns3::NodeContainer infrastructure(enbs);
    infrastructure.Add(pgw);
    infrastructure.Add(sgw);
    built.hookDrops = [ues, ueDevices, enbDevices, u, pgw, pgwIndex, infrastructure](
                          DropSink* sink,
                          DropTraceConnections& connections,
                          bool) {
        uint32_t count = 0;
        for (uint32_t i = 0; i < u; ++i)
        {
            Ptr<ns3::EpcUeNas> nas =
                ns3::DynamicCast<ns3::LteUeNetDevice>(ueDevices.Get(i))->GetNas();
            ns3::Callback<void, Ptr<const ns3::Packet>, Ptr<ns3::Ipv4>, uint32_t> tx(
                [sink, i, nas](Ptr<const ns3::Packet> packet, Ptr<ns3::Ipv4>, uint32_t) {
                    if (nas->GetState() != ns3::EpcUeNas::ACTIVE)
                    {
                        sink->ObserveDrop(packet,
                                          i,
                                          wire::DropReason::Routing,
                                          DropOrigin{"EpcUeNas::Send",
                                                     "UE not attached yet (NAS not ACTIVE)",
                                                     true});
                    }
                });
            count += connections.Connect(ues.Get(i)->GetObject<ns3::Ipv4L3Protocol>(), "Tx", tx);
        }
        // RLC buffer overflows: the UEs' uplink bearers, each eNB's downlink bearers.
        auto hooked = std::make_shared<std::set<ns3::LteRlc*>>();
        for (uint32_t i = 0; i < u; ++i)
        {
            Ptr<ns3::LteUeRrc> rrc =
                ns3::DynamicCast<ns3::LteUeNetDevice>(ueDevices.Get(i))->GetRrc();
            ns3::Callback<void, uint64_t, uint16_t, uint16_t, uint8_t> created(
                [rrc, i, sink, &connections, hooked](uint64_t, uint16_t, uint16_t, uint8_t) {
                    HookNewRlcs(rrc, i, sink, &connections, hooked);
                });
            count += connections.Connect(rrc, "DrbCreated", created);
        }
        for (uint32_t k = 0; k < enbDevices.GetN(); ++k)
        {
            Ptr<ns3::LteEnbRrc> rrc =
                ns3::DynamicCast<ns3::LteEnbNetDevice>(enbDevices.Get(k))->GetRrc();
            const uint32_t index = u + 1 + k;
            ns3::Callback<void, uint16_t, uint16_t> newUe([rrc, index, sink, &connections, hooked](
                                                              uint16_t,
                                                              uint16_t rnti) {
                Ptr<ns3::UeManager> ue = rrc->GetUeManager(rnti);
                ns3::Callback<void, uint64_t, uint16_t, uint16_t, uint8_t> created(
                    [ue, index, sink, &connections, hooked](uint64_t, uint16_t, uint16_t, uint8_t) {
                        HookNewRlcs(ue, index, sink, &connections, hooked);
                    });
                connections.Connect(ue, "DrbCreated", created);
            });
            count += connections.Connect(rrc, "NewUeContext", newUe);
        }
        auto watch = std::make_shared<LteDropWatch>(sink, pgwIndex);
        for (uint32_t a = 0; a < pgw->GetNApplications(); ++a)
        {
            if (auto app = ns3::DynamicCast<ns3::EpcPgwApplication>(pgw->GetApplication(a)))
            {
                ns3::Callback<void, Ptr<ns3::Packet>> rx(
                    [watch](Ptr<ns3::Packet> packet) { watch->OnTunRx(packet); });
                count += connections.Connect(app, "RxFromTun", rx);
            }
        }
        ns3::Callback<void, Ptr<const ns3::Packet>, Ptr<ns3::Ipv4>, uint32_t> forwarded(
            [watch](Ptr<const ns3::Packet> packet, Ptr<ns3::Ipv4>, uint32_t) {
                watch->OnPgwTx(packet);
            });
        count += connections.Connect(pgw->GetObject<ns3::Ipv4L3Protocol>(), "Tx", forwarded);
        for (uint32_t k = 0; k < infrastructure.GetN(); ++k)
        {
            Ptr<ns3::Node> node = infrastructure.Get(k);
            const uint32_t index = u + 1 + k;
            count += HookIpv4Drops(node, index, sink, connections);
            count += HookTrafficControlDrops(node, index, sink, connections);
            for (uint32_t d = 0; d < node->GetNDevices(); ++d)
            {
                if (auto p2p = ns3::DynamicCast<ns3::PointToPointNetDevice>(node->GetDevice(d)))
                {
                    count += HookPointToPointDrops(p2p, index, sink, connections);
                }
            }
        }
        return count;
    };

    auto delay = [](uint64_t ns) { return wire::FormatTime(ns); };
    std::ostringstream d;
    d << "lte EPC, " << p.ues << " UE" << (p.ues == 1 ? "" : "s") << " + remote host, " << p.enbs
      << " eNB" << (p.enbs == 1 ? "" : "s") << ": " << p.scheduler << " scheduler, " << p.bandwidth
      << " RBs, eNB " << p.enbTxPower << " dBm, UE " << p.ueTxPower << " dBm, "
      << ToString(p.radio.propagation) << "; S1-U " << p.rateTexts[0] << "/"
      << delay(p.s1uLinkDelayNs) << ", S5 " << p.rateTexts[1] << "/" << delay(p.s5LinkDelayNs)
      << ", remote host " << p.rateTexts[2] << "/" << delay(p.remoteHostDelayNs) << "; "
      << Describe(p.background);
    built.description = d.str();
    return built;
}

std::string
LteNetworkBuilder::GetName() const
{
    return "lte";
}

std::string
LteNetworkBuilder::GetDoc() const
{
    return "LTE with EPC: UEs, eNBs and a remote host behind the PGW. The UEs are nodes "
           "0..ues and the remote host is node ues.";
}

NodeCountRule
LteNetworkBuilder::GetNodeCountRule() const
{
    NodeCountRule rule;
    rule.key = "ues";
    rule.argument = "ues";
    rule.extra = 1;
    rule.max = kMaxNodes - 1;
    rule.required = true;
    rule.doc = "Number of UEs; the remote host is one more node.";
    return rule;
}

std::vector<TableUse>
LteNetworkBuilder::GetTableUses() const
{
    return {LteRadioUse(),
            TableUse::Whole("placement"),
            TableUse::Whole("background"),
            TableUse::Whole("traces")};
}

void
LteNetworkBuilder::DeclareArguments(ArgumentTable& table)
{
    table
        .Add("ues",
             "ues",
             "number of UEs (nodes 0..ues-1; the remote host is node ues)",
             m_options.ues)
        .Min(1)
        .Max(kMaxNodes - 1)
        .Unset("--nodes - 1");
    table.Add("enbs", "enbs", "number of eNBs; each UE attaches to the closest", m_options.enbs)
        .Min(1)
        .Max(kMaxNodes);
    table
        .Add("enbPositions",
             "enb_positions",
             "eNB positions in metres, \"x,y,z;...\", one per eNB",
             m_options.enbPositions)
        .Type(ArgumentType::Positions)
        .Unit("m")
        .Unset("eNB k at (500 k, 0, 0)");
    table.Add("scheduler", "scheduler", "MAC scheduler", m_options.scheduler)
        .Choices({{"pf", "pf"},
                  {"rr", "rr"},
                  {"fdmt", "fdmt"},
                  {"tdmt", "tdmt"},
                  {"tta", "tta"},
                  {"fdbet", "fdbet"},
                  {"tdbet", "tdbet"},
                  {"fdtbfq", "fdtbfq"},
                  {"tdtbfq", "tdtbfq"},
                  {"pss", "pss"},
                  {"cqa", "cqa"}});
    table.Add("bandwidth", "bandwidth", "uplink and downlink bandwidth", m_options.bandwidth)
        .Unit("resource blocks")
        .Allowed({6, 15, 25, 50, 75, 100});
    table.Add("enbTxPower", "enb_tx_power", "eNB transmit power", m_options.enbTxPower).Unit("dBm");
    table.Add("ueTxPower", "ue_tx_power", "UE transmit power", m_options.ueTxPower).Unit("dBm");
    table
        .Add("s1uLinkDataRate",
             "s1u_link_data_rate",
             "S1-U (eNB - SGW) link rate, as an ns-3 DataRate",
             m_options.s1uLinkDataRate)
        .Type(ArgumentType::DataRate)
        .Unit("bit/s");
    table
        .Add("s1uLinkDelay",
             "s1u_link_delay",
             "S1-U (eNB - SGW) link delay, a time with unit",
             m_options.s1uLinkDelay)
        .Type(ArgumentType::Duration);
    table
        .Add("s5LinkDataRate",
             "s5_link_data_rate",
             "S5 (SGW - PGW) link rate, as an ns-3 DataRate",
             m_options.s5LinkDataRate)
        .Type(ArgumentType::DataRate)
        .Unit("bit/s");
    table
        .Add("s5LinkDelay",
             "s5_link_delay",
             "S5 (SGW - PGW) link delay, a time with unit",
             m_options.s5LinkDelay)
        .Type(ArgumentType::Duration);
    table
        .Add("remoteHostDataRate",
             "remote_host_data_rate",
             "PGW - remote host link rate, as an ns-3 DataRate (MTU 1500)",
             m_options.remoteHostDataRate)
        .Type(ArgumentType::DataRate)
        .Unit("bit/s");
    table
        .Add("remoteHostDelay",
             "remote_host_delay",
             "PGW - remote host link delay, a time with unit",
             m_options.remoteHostDelay)
        .Type(ArgumentType::Duration);
}

uint32_t
LteNetworkBuilder::ResolveNodeCount(uint32_t requested) const
{
    if (requested != 0)
    {
        return requested;
    }
    return (m_options.ues == 0 ? 1 : m_options.ues) + 1;
}

std::optional<std::string>
LteNetworkBuilder::Validate(const NetworkRequest& request) const
{
    return ValidateWithPlacement(
        ParseLteOptions(m_options, request),
        request.placement,
        [](const LteParameters& p) { return p.ues; },
        "UEs");
}

BuiltNetwork
LteNetworkBuilder::Build(const NetworkRequest& request, int64_t stream)
{
    const auto p = std::get<LteParameters>(ParseLteOptions(m_options, request));
    const auto positions = std::get<std::vector<ns3::Vector>>(
        ResolvePositions(request.placement, p.ues, p.background.nodes, "UEs"));
    return BuildLteNetwork(p, positions, stream);
}

} // namespace netloop
