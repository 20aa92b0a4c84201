/*
 * Background ("redundant") traffic: extra nodes that send UDP to a sink at a
 * given rate, to load the medium the control loops share (contention studies).
 */
#ifndef NETLOOP_BACKGROUND_TRAFFIC_H
#define NETLOOP_BACKGROUND_TRAFFIC_H

#include "checked-command-line.h"
#include "network-schema.h"

#include "ns3/application.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/node-container.h"
#include "ns3/random-variable-stream.h"
#include "ns3/socket.h"

#include <cstdint>
#include <string>
#include <variant>

namespace netloop
{

/// The UDP port background traffic is sent to (discarded by a sink there).
constexpr uint16_t kBackgroundPort = 9;

/// How a background node spaces its packets.
enum class BackgroundTraffic
{
    Cbr,     //!< constant interval size * 8 / rate
    Poisson, //!< exponential intervals of that mean
    OnOff,   //!< exponential on and off periods; CBR while on
};

/// Command-line values of background traffic, as typed.
struct BackgroundOptions
{
    uint32_t nodes = 0;           //!< number of background nodes
    std::string traffic = "cbr";  //!< cbr, poisson or onoff
    std::string rate = "500kbps"; //!< per node, while sending (ns-3 DataRate)
    uint32_t packetSize = 1000;   //!< UDP payload bytes
    std::string on = "1s";        //!< onoff: mean on period
    std::string off = "1s";       //!< onoff: mean off period

    /// Declares --bgNodes, --bgTraffic, --bgRate, --bgPacketSize, --bgOn, --bgOff: the shared
    /// table "background".
    void DeclareArguments(ArgumentTable& table);
    /// Declares the arguments and registers them on `cmd`.
    void AddArguments(CheckedCommandLine& cmd);
};

/// Validated background traffic.
struct BackgroundParameters
{
    uint32_t nodes = 0;
    BackgroundTraffic traffic = BackgroundTraffic::Cbr;
    ns3::DataRate rate = ns3::DataRate("500kbps");
    std::string rateText = "500kbps";
    uint32_t packetSize = 1000;
    uint64_t onNs = 1000000000;
    uint64_t offNs = 1000000000;
};

/// Parses and checks the options; a message naming the argument on failure.
std::variant<BackgroundParameters, std::string> ParseBackgroundOptions(
    const BackgroundOptions& options);

/// One line, e.g. "4 background nodes, poisson 500kbps of 1000-byte packets".
std::string Describe(const BackgroundParameters& parameters);

/**
 * \brief Sends UDP packets of a fixed size to one address: CBR, Poisson or on/off.
 *
 * Starts at a uniformly random offset within one packet interval (so that
 * background nodes do not start in lockstep), then: cbr sends every
 * size * 8 / rate; poisson draws exponential intervals of that mean; onoff
 * alternates exponential on periods (mean On), sending CBR at the rate, and
 * exponential off periods (mean Off), sending nothing. Long-run mean rate:
 * rate for cbr and poisson, rate * On / (On + Off) for onoff.
 */
class BackgroundSender : public ns3::Application
{
  public:
    /// \return the TypeId
    static ns3::TypeId GetTypeId();
    BackgroundSender();
    ~BackgroundSender() override;

    /**
     * \param parameters traffic model, rate, size, on/off means
     * \param destination where to send
     * \param port the destination UDP port
     */
    void Setup(const BackgroundParameters& parameters, ns3::Ipv4Address destination, uint16_t port);
    /// Fixes the random streams; \return the number of streams used
    int64_t AssignStreams(int64_t stream);
    /// \return packets sent so far
    uint64_t GetSent() const;

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    /// Sends one packet and schedules the next (cbr, poisson).
    void SendAndSchedule();
    /// Starts an on period (onoff).
    void StartOn();
    /// Sends while the on period lasts (onoff).
    void SendWhileOn();
    /// Sends one packet now.
    void SendOne();

    BackgroundParameters m_parameters;                     //!< traffic
    ns3::Ipv4Address m_destination;                        //!< sink address
    uint16_t m_port = kBackgroundPort;                     //!< sink port
    ns3::Time m_interval;                                  //!< size * 8 / rate
    ns3::Ptr<ns3::Socket> m_socket;                        //!< UDP socket
    ns3::EventId m_event;                                  //!< next send or period change
    ns3::Time m_onEnd;                                     //!< end of the current on period
    ns3::Ptr<ns3::UniformRandomVariable> m_start;          //!< start offset
    ns3::Ptr<ns3::ExponentialRandomVariable> m_gaps;       //!< poisson intervals
    ns3::Ptr<ns3::ExponentialRandomVariable> m_onPeriods;  //!< onoff on periods
    ns3::Ptr<ns3::ExponentialRandomVariable> m_offPeriods; //!< onoff off periods
    uint64_t m_sent = 0;                                   //!< packets sent
};

/**
 * Installs a BackgroundSender on every sender node, sending to sinkAddress on
 * kBackgroundPort, and a socket on the sink node that reads and discards what
 * arrives there (so no ICMP "port unreachable" goes back). Does nothing for
 * an empty sender container.
 * \return the number of random streams used from stream on
 */
int64_t InstallBackgroundTraffic(const BackgroundParameters& parameters,
                                 const ns3::NodeContainer& senders,
                                 ns3::Ptr<ns3::Node> sink,
                                 ns3::Ipv4Address sinkAddress,
                                 int64_t stream);

} // namespace netloop

#endif // NETLOOP_BACKGROUND_TRAFFIC_H
