#include "step-engine.h"

#include "instant-order-scheduler.h"
#include "netloop-tags.h"

#include "ns3/constant-velocity-mobility-model.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

namespace netloop
{

NS_LOG_COMPONENT_DEFINE("NetloopStepEngine");

using ns3::Ptr;
using ns3::Simulator;

namespace
{

/// Largest time ns-3 can represent, in ns (Time is a signed 64-bit count).
constexpr uint64_t kMaxTimeNs = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
/// Largest UDP payload in an IPv4 datagram.
constexpr uint32_t kMaxUdpPayload = 65507;

wire::Error
MakeError(wire::ErrorCode code, std::string message)
{
    return wire::Error{code, std::move(message)};
}

std::string
Vec3(const std::array<double, 3>& v)
{
    std::ostringstream os;
    os << "(" << v[0] << ", " << v[1] << ", " << v[2] << ")";
    return os.str();
}

} // namespace

AddressOf
FirstInterfaceAddresses(const ns3::NodeContainer& nodes)
{
    return [nodes](uint32_t index) {
        if (index >= nodes.GetN())
        {
            return ns3::Ipv4Address::GetAny();
        }
        Ptr<ns3::Ipv4> ipv4 = nodes.Get(index)->GetObject<ns3::Ipv4>();
        if (!ipv4)
        {
            return ns3::Ipv4Address::GetAny();
        }
        for (uint32_t i = 0; i < ipv4->GetNInterfaces(); ++i)
        {
            for (uint32_t a = 0; a < ipv4->GetNAddresses(i); ++a)
            {
                const ns3::Ipv4Address address = ipv4->GetAddress(i, a).GetLocal();
                if (!address.IsLocalhost() && !address.IsAny())
                {
                    return address;
                }
            }
        }
        return ns3::Ipv4Address::GetAny();
    };
}

StepEngine::StepEngine(ns3::NodeContainer nodes, AddressOf addressOf, std::string description)
    : m_nodes(std::move(nodes)),
      m_addressOf(std::move(addressOf)),
      m_description(std::move(description))
{
    NS_LOG_FUNCTION(this << m_nodes.GetN());
    // Same-instant order: the network's events, then the sends, then a step's end.
    InstantOrderScheduler::Install();
    for (uint32_t i = 0; i < m_nodes.GetN(); ++i)
    {
        Ptr<ns3::Node> node = m_nodes.Get(i);
        if (!node->GetObject<ns3::MobilityModel>())
        {
            node->AggregateObject(ns3::CreateObject<ns3::ConstantVelocityMobilityModel>());
        }
        m_mobility.push_back(node->GetObject<ns3::ConstantVelocityMobilityModel>());
        Ptr<ControlApp> app = ns3::CreateObject<ControlApp>();
        node->AddApplication(app);
        m_apps.push_back(app);
        m_appTraces.Connect(app, "Tx", ns3::MakeCallback(&StepEngine::OnTx, this));
        m_appTraces.Connect(app, "TxFailed", ns3::MakeCallback(&StepEngine::OnTxFailed, this));
        m_appTraces.Connect(app, "Rx", ns3::MakeCallback(&StepEngine::OnRx, this));
        m_appTraces.Connect(app, "TcpTx", ns3::MakeCallback(&StepEngine::OnTcpTx, this));
        m_appTraces.Connect(app, "TcpRx", ns3::MakeCallback(&StepEngine::OnTcpRx, this));
        m_appTraces.Connect(app, "TcpFailed", ns3::MakeCallback(&StepEngine::OnTcpFailed, this));
    }
    HookStandardDrops(m_nodes, this, m_dropTraces);
}

StepEngine::~StepEngine()
{
    NS_LOG_FUNCTION(this);
    m_dropTraces.DisconnectAll();
    m_appTraces.DisconnectAll();
}

uint32_t
StepEngine::GetNodeCount() const
{
    return m_nodes.GetN();
}

const std::string&
StepEngine::GetDescription() const
{
    return m_description;
}

uint64_t
StepEngine::GetNow() const
{
    return static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
}

bool
StepEngine::IsConfigured() const
{
    return m_configured;
}

Ptr<ControlApp>
StepEngine::GetApp(uint32_t nodeIndex) const
{
    return m_apps.at(nodeIndex);
}

DropTraceConnections&
StepEngine::GetDropTraces()
{
    return m_dropTraces;
}

std::size_t
StepEngine::GetInFlightCount() const
{
    std::size_t framed = 0;
    for (const MessageFramer& f : m_framers)
    {
        framed += f.GetPendingCount();
    }
    return m_inFlight.size() + framed;
}

uint64_t
StepEngine::GetKinematicsApplied() const
{
    return m_kinematicsApplied;
}

void
StepEngine::SetDropLog(DropLog* log)
{
    m_dropLog = log;
}

uint32_t
StepEngine::HookDrops(const std::function<uint32_t(DropSink*, DropTraceConnections&, bool)>& hook)
{
    if (!hook)
    {
        return 0;
    }
    return hook(this, m_dropTraces, m_dropLog != nullptr);
}

StepEngine::Result<wire::Configured>
StepEngine::Configure(const wire::Configure& configure)
{
    NS_LOG_FUNCTION(this << configure.flows.size());
    if (m_configured)
    {
        return MakeError(wire::ErrorCode::UnexpectedMessage,
                         "the network is already configured; Configure is sent once");
    }
    if (auto problem = FlowRegistry::Validate(configure.flows, GetNodeCount()))
    {
        return MakeError(wire::ErrorCode::InvalidConfig, *problem);
    }
    std::vector<ns3::Ipv4Address> destinations;
    for (const wire::FlowSpec& f : configure.flows)
    {
        const ns3::Ipv4Address address = m_addressOf(f.dst);
        if (address.IsAny() || address.IsBroadcast())
        {
            return MakeError(wire::ErrorCode::InvalidConfig,
                             "flow " + std::to_string(f.flow) + ": destination node " +
                                 std::to_string(f.dst) + " has no IPv4 address to send to");
        }
        destinations.push_back(address);
    }
    // Receiving ports first: the sending sockets then take ephemeral ports around them.
    std::string error;
    for (const wire::FlowSpec& f : configure.flows)
    {
        const bool ok = f.transport == wire::Transport::Tcp
                            ? m_apps[f.dst]->ListenTcp(f.flow, f.port, &error)
                            : m_apps[f.dst]->Listen(f.flow, f.port, &error);
        if (!ok)
        {
            return MakeError(wire::ErrorCode::InvalidConfig, error);
        }
    }
    for (const wire::FlowSpec& f : configure.flows)
    {
        const bool ok =
            f.transport == wire::Transport::Tcp
                ? m_apps[f.src]->OpenTcpSender(f.flow, destinations[f.flow], f.port, &error)
                : m_apps[f.src]->OpenSendSocket(&error);
        if (!ok)
        {
            return MakeError(wire::ErrorCode::InvalidConfig, error);
        }
    }
    m_flows.Set(configure.flows);
    m_destinations = std::move(destinations);
    m_framers.assign(configure.flows.size(), MessageFramer());
    m_configured = true;
    return wire::Configured{GetNodeCount(), m_description};
}

std::optional<std::string>
StepEngine::CheckRule(const wire::AnswerRule& rule) const
{
    const std::string what = "rule for flow " + std::to_string(rule.triggerFlow);
    if (!m_flows.Has(rule.triggerFlow) || !m_flows.Has(rule.answerFlow))
    {
        return what + ": answer flow " + std::to_string(rule.answerFlow) + " or trigger flow " +
               "does not exist; " + std::to_string(m_flows.GetN()) + " flows are configured";
    }
    const wire::FlowSpec& trigger = m_flows.Get(rule.triggerFlow);
    const wire::FlowSpec& answer = m_flows.Get(rule.answerFlow);
    if (answer.src != trigger.dst)
    {
        return what + ": its answer flow " + std::to_string(rule.answerFlow) + " leaves node " +
               std::to_string(answer.src) + ", not the node the trigger flow reaches (" +
               std::to_string(trigger.dst) + ")";
    }
    if (rule.stateCount == 0)
    {
        return what + ": an answer needs at least 1 packet (state count 0)";
    }
    const bool tcp = answer.transport == wire::Transport::Tcp;
    if (rule.size == 0 || (!tcp && rule.size > kMaxUdpPayload))
    {
        return what + ": answers of " + std::to_string(rule.size) +
               " payload bytes; a control packet carries 1 to " +
               std::to_string(tcp ? std::numeric_limits<uint32_t>::max() : kMaxUdpPayload);
    }
    if (rule.delay > kMaxTimeNs)
    {
        return what + ": delay " + wire::FormatTime(rule.delay) +
               " is beyond the largest time ns-3 represents";
    }
    return std::nullopt;
}

StepEngine::Result<wire::RulesInstalled>
StepEngine::SetRules(const wire::Rules& rules)
{
    NS_LOG_FUNCTION(this << rules.rules.size());
    if (!m_configured || m_rulesClosed)
    {
        return MakeError(wire::ErrorCode::UnexpectedMessage,
                         "rules are installed once, after Configure and before the first Step");
    }
    std::map<uint32_t, RuleState> installed;
    std::set<uint32_t> answerFlows;
    for (const wire::AnswerRule& rule : rules.rules)
    {
        if (auto problem = CheckRule(rule))
        {
            return MakeError(wire::ErrorCode::InvalidConfig, *problem);
        }
        if (installed.count(rule.triggerFlow) > 0 || !answerFlows.insert(rule.answerFlow).second)
        {
            return MakeError(wire::ErrorCode::InvalidConfig,
                             "rule for flow " + std::to_string(rule.triggerFlow) +
                                 ": a flow triggers, and a flow answers, one rule at most");
        }
        installed[rule.triggerFlow].rule = rule;
    }
    m_rules = std::move(installed);
    m_rulesClosed = true;
    return wire::RulesInstalled{static_cast<uint32_t>(m_rules.size())};
}

std::optional<wire::Error>
StepEngine::ValidateStep(const wire::Step& step) const
{
    const uint64_t now = GetNow();
    auto invalid = [](std::string message) {
        return MakeError(wire::ErrorCode::InvalidStep, std::move(message));
    };
    if (step.until > kMaxTimeNs)
    {
        return invalid("step until " + wire::FormatTime(step.until) +
                       " is beyond the largest time ns-3 represents (" +
                       wire::FormatTime(kMaxTimeNs) + ")");
    }
    if (step.until < now)
    {
        return invalid("step until " + wire::FormatTime(step.until) +
                       " is before the time already reached, " + wire::FormatTime(now));
    }
    for (const wire::SendRequest& s : step.sends)
    {
        // Built only for a message: this loop runs for every send of every step.
        auto what = [&s]() {
            return "send of flow " + std::to_string(s.flow) + " packet " + std::to_string(s.number);
        };
        if (!m_flows.Has(s.flow))
        {
            return invalid(what() + ": no such flow; " + std::to_string(m_flows.GetN()) +
                           " flows are configured");
        }
        if (s.time < now)
        {
            return invalid(what() + " at " + wire::FormatTime(s.time) +
                           " is before the time already reached, " + wire::FormatTime(now));
        }
        if (s.time > kMaxTimeNs)
        {
            return invalid(what() + " at " + wire::FormatTime(s.time) +
                           " is beyond the largest time ns-3 represents");
        }
        const bool tcp = m_flows.Get(s.flow).transport == wire::Transport::Tcp;
        if (!tcp && s.size > kMaxUdpPayload)
        {
            return invalid(what() + " has " + std::to_string(s.size) +
                           " payload bytes; a UDP datagram carries at most " +
                           std::to_string(kMaxUdpPayload));
        }
        if (!tcp && s.size == 0)
        {
            return invalid(what() + " has 0 payload bytes; a UDP control packet needs at "
                                    "least 1, the bytes its identity (ControlTag) is attached to");
        }
        if (tcp && s.size == 0)
        {
            return invalid(what() + " has 0 bytes; a TCP flow frames its messages by byte "
                                    "count, so each needs at least 1 byte");
        }
    }
    for (const wire::NodeKinematics& k : step.kinematics)
    {
        auto what = [&k]() { return "kinematics for node " + std::to_string(k.node); };
        if (k.node >= GetNodeCount())
        {
            return invalid(what() + ": the network has " + std::to_string(GetNodeCount()) +
                           " nodes");
        }
        for (std::size_t i = 0; i < 3; ++i)
        {
            if (!std::isfinite(k.position[i]) || !std::isfinite(k.velocity[i]))
            {
                return invalid(what() + ": position " + Vec3(k.position) + " and velocity " +
                               Vec3(k.velocity) + " must be finite");
            }
        }
        if (!m_mobility[k.node])
        {
            Ptr<ns3::MobilityModel> model = m_nodes.Get(k.node)->GetObject<ns3::MobilityModel>();
            return invalid(what() + ": its mobility model is " +
                           (model ? model->GetInstanceTypeId().GetName() : std::string("none")) +
                           "; setting position and velocity needs "
                           "ns3::ConstantVelocityMobilityModel");
        }
    }
    return std::nullopt;
}

StepEngine::Result<wire::StepDone>
StepEngine::Step(const wire::Step& step)
{
    NS_LOG_FUNCTION(this << step.until << step.sends.size());
    if (!m_configured)
    {
        return MakeError(wire::ErrorCode::UnexpectedMessage,
                         "Step before Configure: the flows are not configured yet");
    }
    if (auto error = ValidateStep(step))
    {
        return *error;
    }
    const uint64_t now = GetNow();
    m_rulesClosed = true;

    for (const wire::NodeKinematics& k : step.kinematics)
    {
        ns3::ConstantVelocityMobilityModel* model = ns3::PeekPointer(m_mobility[k.node]);
        const ns3::Vector position(k.position[0], k.position[1], k.position[2]);
        const ns3::Vector velocity(k.velocity[0], k.velocity[1], k.velocity[2]);
        const ns3::Vector p = model->GetPosition();
        const ns3::Vector v = model->GetVelocity();
        if (p.x == position.x && p.y == position.y && p.z == position.z && v.x == velocity.x &&
            v.y == velocity.y && v.z == velocity.z)
        {
            continue; // already there: no course change for the models that listen
        }
        model->SetPosition(position);
        model->SetVelocity(velocity);
        ++m_kinematicsApplied;
    }

    for (const wire::SendRequest& s : step.sends)
    {
        const wire::FlowSpec& flow = m_flows.Get(s.flow);
        ControlPacket packet;
        packet.number = s.number;
        packet.port = flow.port;
        packet.stateIndex = s.stateIndex;
        packet.stateCount = s.stateCount;
        packet.sentNs = s.time;
        packet.size = s.size;
        packet.serial = m_nextSerial++;
        // A gate ranked after the network's events at the send's instant (see
        // InstantRank): the same order whether this step starts at that instant
        // or long before it.
        const uint32_t context = m_nodes.Get(flow.src)->GetId();
        ScopedInstantRank rank(InstantRank::Send);
        Simulator::ScheduleWithContext(context,
                                       ns3::NanoSeconds(s.time - now),
                                       &StepEngine::OpenSendGate,
                                       context,
                                       m_apps[flow.src],
                                       s.flow,
                                       m_destinations[s.flow],
                                       packet);
    }

    m_current = wire::StepDone{};
    m_stopAtDelivery = step.stopAtDelivery;
    m_stopTriggered = false;
    m_endNs = step.until;
    m_lastCheckCount.reset();
    m_endReached = false;
    {
        ScopedInstantRank rank(InstantRank::StepEnd);
        m_endEvent =
            Simulator::Schedule(ns3::NanoSeconds(step.until - now), &StepEngine::EndCheck, this);
    }

    while (!m_endReached)
    {
        // Only EndCheck stops the simulator for us; another Stop (e.g. one left by
        // a user's script) just ends this Run early, and we carry on.
        const uint64_t before = Simulator::GetEventCount();
        Simulator::Run();
        if (!m_endReached && Simulator::GetEventCount() == before)
        {
            return MakeError(wire::ErrorCode::Internal,
                             "the simulator stopped at " + wire::FormatTime(GetNow()) +
                                 " with no event left before the end of the step at " +
                                 wire::FormatTime(m_endNs));
        }
    }
    m_current.reached = GetNow();
    if (m_dropLog)
    {
        m_dropLog->Flush();
    }
    NS_LOG_INFO("step reached " << m_current.reached << "ns: " << m_current.deliveries.size()
                                << " deliveries, " << m_current.drops.size() << " drops");
    return std::move(m_current);
}

void
StepEngine::EndCheck()
{
    // Runs at E after every event that was queued at E when it was scheduled. If
    // nothing ran between the previous check and this one, no event at E is left
    // (none could have been added), so the step is complete. GetEventCount()
    // differences between two checks count the events in between plus one.
    const uint64_t count = Simulator::GetEventCount();
    if (m_lastCheckCount && count - *m_lastCheckCount == 1)
    {
        m_endReached = true;
        Simulator::Stop();
        return;
    }
    m_lastCheckCount = count;
    ScopedInstantRank rank(InstantRank::StepEnd);
    m_endEvent = Simulator::ScheduleNow(&StepEngine::EndCheck, this);
}

void
StepEngine::OpenSendGate(uint32_t context,
                         Ptr<ControlApp> app,
                         uint32_t flow,
                         ns3::Ipv4Address destination,
                         ControlPacket packet)
{
    // The send itself is a network event with the newest uid, so the network's
    // events at this instant keep running in uid order (see InstantRank).
    Simulator::ScheduleWithContext(context,
                                   ns3::Seconds(0),
                                   &ControlApp::Send,
                                   app,
                                   flow,
                                   destination,
                                   packet);
}

wire::Summary
StepEngine::Finish() const
{
    return wire::Summary{GetNow(), m_flows.GetCounters()};
}

void
StepEngine::OnTx(uint32_t flow, Ptr<const ns3::Packet> packet)
{
    const std::vector<ControlTag> tags = ControlTagsOf(*packet);
    if (tags.size() != 1)
    {
        NS_LOG_WARN("flow " << flow << ": not tracking a packet without its ControlTag");
        return;
    }
    const ControlTag& tag = tags.front();
    InFlight record;
    record.flow = flow;
    record.packet.number = tag.number;
    record.packet.port = tag.port;
    record.packet.stateIndex = tag.stateIndex;
    record.packet.stateCount = tag.stateCount;
    record.packet.sentNs = tag.sentNs;
    record.packet.size = packet->GetSize();
    record.packet.serial = tag.serial;
    m_inFlight[tag.serial] = record;
    m_flows.CountSent(flow);
}

void
StepEngine::OnTxFailed(uint32_t flow, Ptr<const ns3::Packet> packet, ns3::Socket::SocketErrno error)
{
    const uint32_t src = m_flows.Get(flow).src;
    const bool noRoute = error == ns3::Socket::ERROR_NOROUTETOHOST;
    ObserveDrop(packet,
                src,
                noRoute ? wire::DropReason::Routing : wire::DropReason::Other,
                DropOrigin{"UdpSocket::SendTo",
                           noRoute ? "ERROR_NOROUTETOHOST" : "the socket refused the packet",
                           true});
}

void
StepEngine::OnRx(uint32_t flow, Ptr<const ns3::Packet> packet)
{
    // One datagram is one control packet; its identity is the byte tag on its
    // payload, whatever packet tags a concatenating layer left on it.
    const std::vector<ControlTag> tags = ControlTagsOf(*packet);
    if (tags.empty())
    {
        NS_LOG_WARN("flow " << flow << ": ignoring a packet without a ControlTag");
        return;
    }
    for (const ControlTag& tag : tags)
    {
        auto it = m_inFlight.find(tag.serial);
        ControlPacket received;
        bool first = false;
        if (it != m_inFlight.end())
        {
            received = it->second.packet;
            m_inFlight.erase(it);
            first = true;
        }
        else
        {
            received = TagValues(tag);
            received.size = packet->GetSize();
            // Lost at this very instant: the bridge takes a delivery before a
            // loss of the same instant, so this delivery is its first report.
            auto lost = std::find(m_lostNow.begin(), m_lostNow.end(), tag.serial);
            if (m_lostNowNs == GetNow() && lost != m_lostNow.end())
            {
                m_lostNow.erase(lost);
                first = true;
            }
        }
        Deliver(flow, received, first);
    }
}

void
StepEngine::OnTcpTx(uint32_t flow, ControlPacket message)
{
    m_framers.at(flow).Push(message);
    m_flows.CountSent(flow);
}

void
StepEngine::OnTcpRx(uint32_t flow, uint32_t bytes)
{
    for (const ControlPacket& message : m_framers.at(flow).Consume(bytes))
    {
        Deliver(flow, message, true);
    }
}

void
StepEngine::OnTcpFailed(uint32_t flow)
{
    const uint32_t src = m_flows.Get(flow).src;
    for (const ControlPacket& message : m_framers.at(flow).TakePending())
    {
        if (m_dropLog)
        {
            m_dropLog->Write(GetNow(),
                             src,
                             flow,
                             message,
                             wire::DropReason::Other,
                             true,
                             DropOrigin{"TcpSocket", "the connection failed or broke", true});
        }
        Drop(flow, message, src, wire::DropReason::Other);
    }
}

void
StepEngine::Deliver(uint32_t flow, const ControlPacket& packet, bool first)
{
    const uint64_t now = GetNow();
    m_current.deliveries.push_back(wire::Delivery{flow,
                                                  packet.number,
                                                  packet.stateIndex,
                                                  packet.stateCount,
                                                  packet.sentNs,
                                                  now,
                                                  packet.size});
    m_flows.CountDelivered(flow);
    if (m_stopAtDelivery && !m_stopTriggered && m_flows.Get(flow).stopOnDelivery)
    {
        m_stopTriggered = true;
        if (now < m_endNs)
        {
            // End at this delivery instead: after every event now queued at this time.
            Simulator::Remove(m_endEvent);
            m_endNs = now;
            m_lastCheckCount.reset();
            ScopedInstantRank rank(InstantRank::StepEnd);
            m_endEvent = Simulator::ScheduleNow(&StepEngine::EndCheck, this);
        }
    }
    auto rule = first ? m_rules.find(flow) : m_rules.end();
    if (rule != m_rules.end() && now <= rule->second.rule.lastTrigger)
    {
        m_triggers.push_back(Trigger{flow, packet});
        if (!m_answerScheduled)
        {
            m_answerScheduled = true;
            ScopedInstantRank rank(InstantRank::Response);
            Simulator::ScheduleNow(&StepEngine::AnswerTriggers, this);
        }
    }
}

void
StepEngine::AnswerTriggers()
{
    m_answerScheduled = false;
    std::vector<Trigger> triggers;
    triggers.swap(m_triggers);
    // The bridge's canonical order of one instant's deliveries.
    std::stable_sort(triggers.begin(), triggers.end(), [](const Trigger& a, const Trigger& b) {
        return std::tie(a.flow, a.packet.number, a.packet.stateIndex) <
               std::tie(b.flow, b.packet.number, b.packet.stateIndex);
    });
    const uint64_t now = GetNow();
    for (const Trigger& trigger : triggers)
    {
        RuleState& state = m_rules.at(trigger.flow);
        const wire::AnswerRule& rule = state.rule;
        const uint64_t delay = now > trigger.packet.sentNs ? now - trigger.packet.sentNs : 0;
        if (delay > rule.maxDelay)
        {
            continue;
        }
        auto last = state.lastAnswered.find(trigger.packet.stateIndex);
        if (rule.dropStale && last != state.lastAnswered.end() &&
            trigger.packet.number <= last->second)
        {
            continue;
        }
        state.lastAnswered[trigger.packet.stateIndex] = trigger.packet.number;
        const uint64_t number = state.nextNumber++;
        if (rule.delay > kMaxTimeNs - now)
        {
            continue; // beyond the end of representable time: never sent
        }
        const wire::FlowSpec& answer = m_flows.Get(rule.answerFlow);
        const uint32_t context = m_nodes.Get(answer.src)->GetId();
        for (uint16_t index = 0; index < rule.stateCount; ++index)
        {
            ControlPacket packet;
            packet.number = number;
            packet.port = answer.port;
            packet.stateIndex = index;
            packet.stateCount = rule.stateCount;
            packet.sentNs = now + rule.delay;
            packet.size = rule.size;
            packet.serial = m_nextSerial++;
            ScopedInstantRank rank(InstantRank::Response);
            Simulator::ScheduleWithContext(context,
                                           ns3::NanoSeconds(rule.delay),
                                           &StepEngine::OpenSendGate,
                                           context,
                                           m_apps[answer.src],
                                           rule.answerFlow,
                                           m_destinations[rule.answerFlow],
                                           packet);
        }
    }
}

void
StepEngine::Drop(uint32_t flow, const ControlPacket& packet, uint32_t node, wire::DropReason reason)
{
    NS_LOG_INFO("flow " << flow << " packet " << packet.number << " dropped at node " << node
                        << " (" << wire::ToString(reason) << ")");
    m_current.drops.push_back(wire::DropEvent{flow,
                                              packet.number,
                                              packet.stateIndex,
                                              packet.stateCount,
                                              packet.sentNs,
                                              GetNow(),
                                              node,
                                              reason});
    m_flows.CountDropped(flow);
}

void
StepEngine::ReportDrop(Ptr<const ns3::Packet> packet, uint32_t nodeIndex, wire::DropReason reason)
{
    ObserveDrop(packet, nodeIndex, reason, DropOrigin{});
}

void
StepEngine::ObserveDrop(Ptr<const ns3::Packet> packet,
                        uint32_t nodeIndex,
                        wire::DropReason reason,
                        const DropOrigin& origin)
{
    // A packet seen by a trace may hold the bytes of several control packets
    // (an RLC PDU, an A-MSDU): each is dropped with it.
    for (const ControlTag& tag : ControlTagsOf(*packet))
    {
        auto it = m_inFlight.find(tag.serial);
        if (it != m_inFlight.end())
        {
            const InFlight record = it->second;
            if (origin.fatal)
            {
                m_inFlight.erase(it);
                Drop(record.flow, record.packet, nodeIndex, reason);
                if (m_rules.count(record.flow) > 0)
                {
                    if (m_lostNowNs != GetNow())
                    {
                        m_lostNow.clear();
                        m_lostNowNs = GetNow();
                    }
                    m_lostNow.push_back(tag.serial);
                }
            }
            if (m_dropLog)
            {
                m_dropLog->Write(GetNow(),
                                 nodeIndex,
                                 record.flow,
                                 record.packet,
                                 reason,
                                 origin.fatal,
                                 origin);
            }
        }
        else if (m_dropLog)
        {
            // No longer tracked (delivered or already lost): an observation only.
            m_dropLog->Write(GetNow(), nodeIndex, tag.flow, TagValues(tag), reason, false, origin);
        }
    }
}

ControlPacket
StepEngine::TagValues(const ControlTag& tag)
{
    ControlPacket values;
    values.number = tag.number;
    values.port = tag.port;
    values.stateIndex = tag.stateIndex;
    values.stateCount = tag.stateCount;
    values.sentNs = tag.sentNs;
    values.serial = tag.serial;
    return values;
}

} // namespace netloop
