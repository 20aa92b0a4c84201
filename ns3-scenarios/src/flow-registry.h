/*
 * The flows of a configured run: validation of a Configure message against
 * the network, and the per-flow packet counters reported in the Summary.
 */
#ifndef NETLOOP_FLOW_REGISTRY_H
#define NETLOOP_FLOW_REGISTRY_H

#include "wire.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace netloop
{

/**
 * \brief The flows of a run and their counters.
 *
 * A flow is one directed UDP or TCP stream between two nodes. Its id is its
 * index in Configure::flows; its port is unique at its destination node
 * (whatever the transport), so that the receiving socket identifies the flow.
 */
class FlowRegistry
{
  public:
    /**
     * Checks flows against a network of nodeCount nodes: ids equal to their
     * index, nodes that exist, no flow from a node to itself, no port 0, ports
     * unique per destination.
     *
     * \return nullopt if the flows are valid, else a message naming the flow and the problem
     */
    static std::optional<std::string> Validate(const std::vector<wire::FlowSpec>& flows,
                                               uint32_t nodeCount);

    /// Replaces the flows (which must have passed Validate) and zeroes the counters.
    void Set(const std::vector<wire::FlowSpec>& flows);
    /// \return whether a flow with this id exists
    bool Has(uint32_t flow) const;
    /// \return the flow with this id (which must exist)
    const wire::FlowSpec& Get(uint32_t flow) const;
    /// \return the number of flows
    uint32_t GetN() const;

    /// Counts a packet handed to the sending socket.
    void CountSent(uint32_t flow);
    /// Counts a packet handed to the receiving application.
    void CountDelivered(uint32_t flow);
    /// Counts a packet reported lost inside ns-3.
    void CountDropped(uint32_t flow);
    /// \return the counters of every flow, in flow order
    std::vector<wire::FlowCounters> GetCounters() const;

  private:
    std::vector<wire::FlowSpec> m_flows;        //!< indexed by flow id
    std::vector<wire::FlowCounters> m_counters; //!< indexed by flow id
};

} // namespace netloop

#endif // NETLOOP_FLOW_REGISTRY_H
