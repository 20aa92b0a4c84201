/*
 * The stepping core: runs an ns-3 simulation in steps on behalf of the bridge
 * (docs/design.md §6), in-process and without any socket. The StepServer puts it on a
 * TCP connection; tests drive it directly.
 */
#ifndef NETLOOP_STEP_ENGINE_H
#define NETLOOP_STEP_ENGINE_H

#include "control-app.h"
#include "drop-log.h"
#include "drop-traces.h"
#include "flow-registry.h"
#include "message-framer.h"
#include "netloop-tags.h"
#include "wire.h"

#include "ns3/constant-velocity-mobility-model.h"
#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/node-container.h"
#include "ns3/socket.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace netloop
{

/// The address the control flows of a node are sent to, by node index.
using AddressOf = std::function<ns3::Ipv4Address(uint32_t nodeIndex)>;

/**
 * The first address of the first non-loopback IPv4 interface of each node,
 * looked up when asked (so addresses may be assigned after this call), or
 * Ipv4Address::GetAny() for a node without one.
 */
AddressOf FirstInterfaceAddresses(const ns3::NodeContainer& nodes);

/**
 * \brief Runs the network in steps: the server core, without I/O.
 *
 * Construction installs the InstantOrderScheduler as the simulator's
 * scheduler (moving the events already scheduled).
 *
 * Lifecycle: construct on the nodes of a built network (node index = position
 * in the container); Configure() once with the flows; Step() repeatedly;
 * Finish() for the counters. Every problem with the client's input comes back
 * as a wire::Error value, never as an assertion.
 *
 * Construction installs a ControlApp on every node, a
 * ConstantVelocityMobilityModel on every node that has no mobility model, and
 * hooks the standard drop traces (see HookStandardDrops). Builders of other
 * network kinds may hook more sources with this engine as the DropSink and
 * GetDropTraces() as the connection list.
 *
 * Step semantics (times are integer ns; "now" is the time reached so far):
 * - until >= now and every send time >= now, else InvalidStep. Sends later
 *   than until are accepted and happen in a later step. A UDP send needs at
 *   least 1 payload byte (its ControlTag covers the payload).
 * - Kinematics are applied at now, then each send is scheduled at exactly its
 *   time (same-time sends in message order), then the simulator runs. At its
 *   instant t a send runs after the network's own events at t and before the
 *   step's end (InstantRank), whichever step announced it. A
 *   node whose position and velocity already equal the given ones (for a
 *   moving node: where its model has carried it by now) is left untouched, so
 *   repeating unchanged kinematics costs a comparison and fires no course
 *   change.
 * - TCP flows: a send writes its size in bytes into the flow's connection;
 *   the message is delivered when its last byte reaches the receiving
 *   application, matched to its send record in order (MessageFramer). Nothing
 *   is dropped above TCP; if the connection fails or breaks, every message
 *   not yet delivered (and every later one) is reported dropped, Other, at
 *   the sender.
 * - The step ends at E = until, or, with stop_at_delivery, at E = the time of
 *   the first delivery on a stop_on_delivery flow if that is earlier. It ends
 *   only after every event at time E has run: also events at E scheduled
 *   during the step (e.g. a delivery exactly at until) and zero-delay chains
 *   they start. So a step covers (previous E, E] and reached = E; nothing at
 *   time E is left for the next step, except sends and events the next Step
 *   itself schedules at E.
 * - Scheduled sends are never cancelled: after an early stop, sends later than
 *   E stay scheduled and happen in the steps that reach them.
 *
 * Answer rules (SetRules, once, before the first step) let the engine send an
 * event-triggered controller's answers itself, so the bridge need not stop
 * the network at each delivery (docs/cosimulation.md, "Event-triggered
 * answers as rules"). The first report of a packet of a rule's trigger flow
 * (a delivery of a packet not lost before this instant) at or before the
 * rule's lastTrigger is a candidate. Once the network's events at its instant
 * have run (InstantRank::Response), the instant's candidates are taken in
 * (flow, number, state index) order; one whose delay exceeds maxDelay, or,
 * with dropStale, whose number is not above the last one answered for its
 * state index, is not answered, as the bridge's receiver drops it; each other
 * one is answered by stateCount packets of the answer flow, numbered per rule
 * from 0, sent delay later, at the Response rank of their instant: after the
 * network's events there and before the sends the bridge announced there.
 */
class StepEngine : public DropSink
{
  public:
    /// Either the answer or the Error to send instead.
    template <typename T>
    using Result = std::variant<T, wire::Error>;

    /**
     * \param nodes the nodes the bridge may name, by index
     * \param addressOf where to send a flow destined to a node
     * \param description one line describing the network, for Configured
     */
    StepEngine(ns3::NodeContainer nodes, AddressOf addressOf, std::string description);
    ~StepEngine() override;
    StepEngine(const StepEngine&) = delete;
    StepEngine& operator=(const StepEngine&) = delete;

    /// \return the number of nodes
    uint32_t GetNodeCount() const;
    /// \return the network description
    const std::string& GetDescription() const;
    /// \return the simulated time reached, ns
    uint64_t GetNow() const;
    /// \return whether Configure() succeeded
    bool IsConfigured() const;
    /// \return the control application of a node
    ns3::Ptr<ControlApp> GetApp(uint32_t nodeIndex) const;
    /// \return the drop trace connections made for this engine
    DropTraceConnections& GetDropTraces();
    /// \return how many sent control packets are neither delivered nor reported dropped
    std::size_t GetInFlightCount() const;
    /// \return how many kinematics entries were applied (changed a mobility model)
    uint64_t GetKinematicsApplied() const;

    /**
     * Writes every drop observation of a tagged control packet to this log
     * (not owned; nullptr turns it off). Set it before HookDrops() so that the
     * observation-only trace sources get hooked.
     */
    void SetDropLog(DropLog* log);

    /**
     * Hooks a network kind's own drop traces (see DropHook in
     * network-builder.h) with this engine as the sink; they are disconnected
     * with the standard ones.
     * \return the number of trace sources connected
     */
    uint32_t HookDrops(const std::function<uint32_t(DropSink*, DropTraceConnections&, bool)>& hook);

    /// Validates the flows and opens their sockets.
    Result<wire::Configured> Configure(const wire::Configure& configure);
    /// Installs answer rules (see the class documentation): once, before the first Step.
    Result<wire::RulesInstalled> SetRules(const wire::Rules& rules);
    /// Runs one step (see the class documentation).
    Result<wire::StepDone> Step(const wire::Step& step);
    /// The counters of every flow and the time reached.
    wire::Summary Finish() const;

    /**
     * Reports the first drop of each control packet this engine sent whose
     * bytes the packet holds, identified by its ControlTag (a byte tag, so
     * copies, fragments, segments and concatenations keep it); every later
     * drop of the same packet, and any packet not sent by this engine, is
     * ignored.
     */
    void ReportDrop(ns3::Ptr<const ns3::Packet> packet,
                    uint32_t nodeIndex,
                    wire::DropReason reason) override;

    /**
     * Reports a fatal drop like ReportDrop(); writes every drop of a tagged
     * control packet, fatal or not, to the drop log.
     */
    void ObserveDrop(ns3::Ptr<const ns3::Packet> packet,
                     uint32_t nodeIndex,
                     wire::DropReason reason,
                     const DropOrigin& origin) override;

  private:
    /// A control packet on its way.
    struct InFlight
    {
        uint32_t flow;        //!< flow id
        ControlPacket packet; //!< the tag values it was sent with
    };

    /// \return an InvalidStep error, or nullopt if the step can be carried out
    std::optional<wire::Error> ValidateStep(const wire::Step& step) const;
    /// ControlApp "Tx": the packet enters the network.
    void OnTx(uint32_t flow, ns3::Ptr<const ns3::Packet> packet);
    /// ControlApp "TxFailed": the socket refused the packet.
    void OnTxFailed(uint32_t flow,
                    ns3::Ptr<const ns3::Packet> packet,
                    ns3::Socket::SocketErrno error);
    /// ControlApp "Rx": a delivery.
    void OnRx(uint32_t flow, ns3::Ptr<const ns3::Packet> packet);
    /// ControlApp "TcpTx": a TCP message is sent.
    void OnTcpTx(uint32_t flow, ControlPacket message);
    /// ControlApp "TcpRx": bytes of a TCP flow arrived.
    void OnTcpRx(uint32_t flow, uint32_t bytes);
    /// ControlApp "TcpFailed": a TCP flow's connection failed; its messages are lost.
    void OnTcpFailed(uint32_t flow);
    /// Records a delivery now (and ends an event-driven step if it should);
    /// first: the packet's first report, which a rule may answer.
    void Deliver(uint32_t flow, const ControlPacket& packet, bool first);
    /// Answers the rule candidates of this instant (InstantRank::Response).
    void AnswerTriggers();
    /// \return a problem with a rule, or nullopt
    std::optional<std::string> CheckRule(const wire::AnswerRule& rule) const;
    /// Records a drop now of a packet this engine sent.
    void Drop(uint32_t flow, const ControlPacket& packet, uint32_t node, wire::DropReason reason);
    /// The tag values a ControlTag carries (size 0: the tag does not know it).
    static ControlPacket TagValues(const ControlTag& tag);
    /// The gate of a send (InstantRank::Send): schedules ControlApp::Send now.
    static void OpenSendGate(uint32_t context,
                             ns3::Ptr<ControlApp> app,
                             uint32_t flow,
                             ns3::Ipv4Address destination,
                             ControlPacket packet);
    /// Ends the step once no event at the current time is left (see Step()).
    void EndCheck();

    ns3::NodeContainer m_nodes;                        //!< served nodes
    AddressOf m_addressOf;                             //!< flow destinations
    std::string m_description;                         //!< network description
    std::vector<ns3::Ptr<ControlApp>> m_apps;          //!< one per node
    std::vector<ns3::Ipv4Address> m_destinations;      //!< per flow, set by Configure
    FlowRegistry m_flows;                              //!< flows and counters
    bool m_configured = false;                         //!< Configure() succeeded
    std::unordered_map<uint64_t, InFlight> m_inFlight; //!< by ControlTag serial
    uint64_t m_nextSerial = 0;                         //!< ControlTag serial of the next send
    DropTraceConnections m_dropTraces;                 //!< drop trace hooks
    DropTraceConnections m_appTraces;                  //!< ControlApp trace hooks
    std::vector<ns3::Ptr<ns3::ConstantVelocityMobilityModel>> m_mobility; //!< per node, or null
    std::vector<MessageFramer> m_framers; //!< per flow (TCP flows use theirs)
    DropLog* m_dropLog = nullptr;         //!< drop log, if any
    uint64_t m_kinematicsApplied = 0;     //!< entries that changed a model

    /// A rule and what it has answered so far.
    struct RuleState
    {
        wire::AnswerRule rule;                     //!< as installed
        uint64_t nextNumber = 0;                   //!< number of the next answer
        std::map<uint16_t, uint64_t> lastAnswered; //!< per state index, for dropStale
    };

    /// A delivery a rule may answer, waiting for the end of its instant.
    struct Trigger
    {
        uint32_t flow;        //!< the trigger flow
        ControlPacket packet; //!< what was delivered
    };

    std::map<uint32_t, RuleState> m_rules; //!< by trigger flow
    bool m_rulesClosed = false;            //!< rules set or a step run: no more rules
    std::vector<Trigger> m_triggers;       //!< candidates of the current instant
    bool m_answerScheduled = false;        //!< AnswerTriggers is pending
    std::vector<uint64_t> m_lostNow;       //!< serials of trigger packets lost at m_lostNowNs
    uint64_t m_lostNowNs = 0;              //!< the instant of m_lostNow

    // State of the step being run.
    wire::StepDone m_current;                 //!< deliveries and drops so far
    bool m_stopAtDelivery = false;            //!< the step may end at a delivery
    bool m_stopTriggered = false;             //!< a stop delivery happened
    uint64_t m_endNs = 0;                     //!< E, the time the step ends at
    ns3::EventId m_endEvent;                  //!< the pending EndCheck
    std::optional<uint64_t> m_lastCheckCount; //!< event count at the previous EndCheck
    bool m_endReached = false;                //!< EndCheck stopped the simulator
};

} // namespace netloop

#endif // NETLOOP_STEP_ENGINE_H
