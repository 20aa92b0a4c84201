#include "flow-registry.h"

#include <map>
#include <utility>

namespace netloop
{

std::optional<std::string>
FlowRegistry::Validate(const std::vector<wire::FlowSpec>& flows, uint32_t nodeCount)
{
    const std::string nodes = "the network has " + std::to_string(nodeCount) + " nodes (0.." +
                              std::to_string(nodeCount == 0 ? 0 : nodeCount - 1) + ")";
    std::map<std::pair<uint32_t, uint16_t>, uint32_t> portOwner; // (dst, port) -> flow
    for (std::size_t i = 0; i < flows.size(); ++i)
    {
        const wire::FlowSpec& f = flows[i];
        const std::string name = "flow " + std::to_string(f.flow);
        if (f.flow != i)
        {
            return "the flow at index " + std::to_string(i) + " has id " + std::to_string(f.flow) +
                   "; flow ids must equal their index in Configure.flows";
        }
        if (f.src >= nodeCount)
        {
            return name + ": source node " + std::to_string(f.src) + " does not exist; " + nodes;
        }
        if (f.dst >= nodeCount)
        {
            return name + ": destination node " + std::to_string(f.dst) + " does not exist; " +
                   nodes;
        }
        if (f.src == f.dst)
        {
            return name + " sends from node " + std::to_string(f.src) +
                   " to itself; a flow must cross the network";
        }
        if (f.port == 0)
        {
            return name + ": port 0 is not a valid destination port";
        }
        auto [it, inserted] = portOwner.emplace(std::make_pair(f.dst, f.port), f.flow);
        if (!inserted)
        {
            return "flows " + std::to_string(it->second) + " and " + std::to_string(f.flow) +
                   " both use port " + std::to_string(f.port) + " at node " +
                   std::to_string(f.dst) + "; ports must be unique per destination node";
        }
    }
    return std::nullopt;
}

void
FlowRegistry::Set(const std::vector<wire::FlowSpec>& flows)
{
    m_flows = flows;
    m_counters.assign(flows.size(), wire::FlowCounters{});
    for (std::size_t i = 0; i < flows.size(); ++i)
    {
        m_counters[i].flow = flows[i].flow;
    }
}

bool
FlowRegistry::Has(uint32_t flow) const
{
    return flow < m_flows.size();
}

const wire::FlowSpec&
FlowRegistry::Get(uint32_t flow) const
{
    return m_flows.at(flow);
}

uint32_t
FlowRegistry::GetN() const
{
    return static_cast<uint32_t>(m_flows.size());
}

void
FlowRegistry::CountSent(uint32_t flow)
{
    m_counters.at(flow).sent++;
}

void
FlowRegistry::CountDelivered(uint32_t flow)
{
    m_counters.at(flow).delivered++;
}

void
FlowRegistry::CountDropped(uint32_t flow)
{
    m_counters.at(flow).dropped++;
}

std::vector<wire::FlowCounters>
FlowRegistry::GetCounters() const
{
    return m_counters;
}

} // namespace netloop
