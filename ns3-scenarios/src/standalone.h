/*
 * Standalone mode: ns-3 alone, no bridge, with the traffic pattern of
 * periodic control flows sent through the same engine, applications and tags
 * as a co-simulation; a one-line JSON summary at the end. Used by the
 * benchmarks (co-simulated vs ns-3 alone) and to look at a network without a
 * control loop.
 */
#ifndef NETLOOP_STANDALONE_H
#define NETLOOP_STANDALONE_H

#include "step-engine.h"
#include "wire.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace netloop
{

/// One periodic flow: "src>dst:port:size:period[:start[:udp|tcp]]" (an empty start is 0).
struct StandaloneFlow
{
    uint32_t src = 0;
    uint32_t dst = 1;
    uint16_t port = 0;
    uint32_t size = 0;     //!< payload bytes per packet
    uint64_t periodNs = 0; //!< time between sends
    uint64_t startNs = 0;  //!< first send
    wire::Transport transport = wire::Transport::Udp;
};

/**
 * Parses semicolon-separated flows, e.g. "0>1:5000:100:10ms;1>0:5001:20:10ms:5ms:tcp".
 * \return the flows, or a message naming the flow (by position) and the field
 */
std::variant<std::vector<StandaloneFlow>, std::string> ParseStandaloneFlows(
    const std::string& text);

/// What a standalone run measured.
struct StandaloneResult
{
    uint64_t reachedNs = 0;                   //!< the stop time
    std::vector<wire::FlowCounters> counters; //!< per flow
    std::vector<double> delaySumNs;           //!< per flow, over deliveries
    uint64_t events = 0;                      //!< ns-3 events executed (whole simulation)
    double wallSeconds = 0.0;                 //!< wall time of the run (not the build)
};

/**
 * Configures the engine with the flows (ids in order, stop_on_delivery off),
 * then steps it to stopNs in chunks of at most chunkNs, each step carrying the
 * sends due in it: flow f sends packet k (state 0 of 1) at start + k * period
 * for every such time before stopNs.
 * \return the result, or the engine's Error
 */
std::variant<StandaloneResult, wire::Error> RunStandalone(StepEngine& engine,
                                                          const std::vector<StandaloneFlow>& flows,
                                                          uint64_t stopNs,
                                                          uint64_t chunkNs = 1000000000);

/**
 * The one-line JSON summary:
 *
 *     {"mode":"standalone","description":"...","stop_time_ns":N,"reached_ns":N,
 *      "flows":[{"flow":0,"src":0,"dst":1,"port":5000,"transport":"udp","size":100,
 *                "period_ns":10000000,"start_ns":0,"sent":N,"delivered":N,"dropped":N,
 *                "in_flight":N,"mean_delay_ns":D|null}, ...],
 *      "events":N,"build_wall_seconds":S,"wall_seconds":S}
 */
std::string StandaloneJson(const std::string& description,
                           const std::vector<StandaloneFlow>& flows,
                           uint64_t stopNs,
                           const StandaloneResult& result,
                           double buildWallSeconds);

/// A JSON string literal (quotes, backslashes and control characters escaped).
std::string JsonString(const std::string& text);

} // namespace netloop

#endif // NETLOOP_STANDALONE_H
