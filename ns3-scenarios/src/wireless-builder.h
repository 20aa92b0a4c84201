/*
 * The builder every single-channel wireless network kind (Wi-Fi, WAVE) is:
 * --nodes control nodes, 2 unless given, placed by the placement options
 * with the background nodes, checked and built from its parsed options.
 */
#ifndef NETLOOP_WIRELESS_BUILDER_H
#define NETLOOP_WIRELESS_BUILDER_H

#include "network-builder.h"
#include "placement.h"

#include "ns3/vector.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace netloop
{

/**
 * \brief What the Wi-Fi and WAVE builders share: the node count and its
 * default, and the check and build through the placement.
 *
 * A kind gives its command-line Options, its checked Parameters (with a
 * `background.nodes` member), Parse (Options, NetworkRequest) -> Parameters
 * or a message naming the argument, and Build (Parameters, control node
 * count, control then background positions, stream) -> BuiltNetwork; it
 * declares its name, doc and arguments itself.
 */
template <typename Options, typename Parameters, auto Parse, auto BuildParsed>
class WirelessNetworkBuilder : public NetworkBuilder
{
  public:
    /// --nodes control nodes.
    NodeCountRule GetNodeCountRule() const override
    {
        NodeCountRule rule;
        rule.doc = "Control nodes.";
        return rule;
    }

    /// 0 -> 2.
    uint32_t ResolveNodeCount(uint32_t requested) const override
    {
        return requested == 0 ? 2 : requested;
    }

    std::optional<std::string> Validate(const NetworkRequest& request) const override
    {
        return ValidateWithPlacement(
            Parse(m_options, request),
            request.placement,
            [&request](const Parameters&) { return request.nodeCount; },
            "nodes");
    }

    BuiltNetwork Build(const NetworkRequest& request, int64_t stream) override
    {
        const auto p = std::get<Parameters>(Parse(m_options, request));
        const auto positions = std::get<std::vector<ns3::Vector>>(
            ResolvePositions(request.placement, request.nodeCount, p.background.nodes, "nodes"));
        return BuildParsed(p, request.nodeCount, positions, stream);
    }

  protected:
    Options m_options; //!< command-line values
};

} // namespace netloop

#endif // NETLOOP_WIRELESS_BUILDER_H
