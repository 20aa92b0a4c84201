/*
 * Trace files on request: pcap per device, one ASCII trace, FlowMonitor XML,
 * NetAnim XML and the drop log, for any network (built by netloop or by a
 * user's script).
 */
#ifndef NETLOOP_TRACES_H
#define NETLOOP_TRACES_H

#include "checked-command-line.h"
#include "drop-log.h"
#include "network-schema.h"

#include "ns3/flow-monitor-helper.h"
#include "ns3/flow-monitor.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/output-stream-wrapper.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ns3
{
class AnimationInterface;
}

namespace netloop
{

/// Which trace files to write; an empty string leaves that trace off.
struct TraceOptions
{
    std::string pcap;        //!< prefix: <prefix>-<node id>-<device id>.pcap
    std::string ascii;       //!< one ASCII trace file for every device
    std::string flowMonitor; //!< FlowMonitor XML, written at the end
    std::string netanim;     //!< NetAnim XML
    std::string dropLog;     //!< drop log CSV (see DropLog)

    /// Declares --pcap, --ascii, --flowMonitor, --netanim, --dropLog: the shared table "traces".
    void DeclareArguments(ArgumentTable& table);
    /// Declares the arguments and registers them on `cmd`.
    void AddArguments(CheckedCommandLine& cmd);
    /// \return nullopt, or a message naming the argument whose file cannot be written
    std::optional<std::string> Validate() const;
};

/**
 * \brief The trace files of one run.
 *
 * Start() after the network is built and before the simulation runs: it
 * enables the traces on every node of the simulation (NodeList), whatever
 * built them. pcap and ASCII go through the device's own helper
 * (WifiNetDevice, WaveNetDevice, PointToPointNetDevice, CsmaNetDevice); a
 * device without one (LTE, the EPC's tunnel) is traced at the IP level on
 * its interface (<prefix>-n<node id>-i<interface>.pcap). Finish() writes
 * the FlowMonitor XML (to a temporary name, then renamed), closes the NetAnim
 * file and flushes the drop log; the destructor calls it if nobody did.
 */
class TraceSession
{
  public:
    explicit TraceSession(TraceOptions options);
    ~TraceSession();
    TraceSession(const TraceSession&) = delete;
    TraceSession& operator=(const TraceSession&) = delete;

    /// Enables the requested traces; a message if a file cannot be opened.
    std::optional<std::string> Start();
    /// \return the drop log, or nullptr when none was requested
    DropLog* GetDropLog();
    /// \return the FlowMonitor, or nullptr when none was requested
    ns3::Ptr<ns3::FlowMonitor> GetFlowMonitor();
    /// Writes and closes everything (once).
    void Finish();

  private:
    /// pcap on one device, through its helper or at the IP level.
    void EnablePcap(ns3::Ptr<ns3::NetDevice> device);
    /// ASCII on one device, likewise.
    void EnableAscii(ns3::Ptr<ns3::NetDevice> device);

    TraceOptions m_options;                               //!< what to write
    std::unique_ptr<DropLog> m_dropLog;                   //!< drop log
    std::unique_ptr<ns3::FlowMonitorHelper> m_flowHelper; //!< owns the classifier
    ns3::Ptr<ns3::FlowMonitor> m_flowMonitor;             //!< flow statistics
    std::unique_ptr<ns3::AnimationInterface> m_anim;      //!< NetAnim writer
    ns3::Ptr<ns3::OutputStreamWrapper> m_ascii;           //!< ASCII trace stream
    bool m_finished = false;                              //!< Finish() ran
};

} // namespace netloop

#endif // NETLOOP_TRACES_H
