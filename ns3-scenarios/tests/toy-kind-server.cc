/*
 * netloop-server plus one toy network kind, "toy": the test that a kind is
 * described once, on this side. Nothing on the bridge's side knows it, yet
 * `netloop-server --describe` lists it, `netloop check` checks a scenario with
 * `kind = "toy"` (tests/e2e/network_schema.rs) and the docs test sees it.
 *
 * The toy network: the nodes on one CSMA bus of --toyRate with --toyDelay.
 */
#include "lte-network.h"
#include "p2p-network.h"
#include "server-main.h"
#include "wave-network.h"
#include "wifi-network.h"

#include "ns3/csma-helper.h"
#include "ns3/data-rate.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-generator.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <memory>
#include <vector>

namespace
{

using namespace netloop;

/// --network=toy: every node on one CSMA bus.
class ToyNetworkBuilder : public NetworkBuilder
{
  public:
    std::string GetName() const override
    {
        return "toy";
    }

    std::string GetDoc() const override
    {
        return "A toy kind of the C++ test suite: the nodes on one CSMA bus.";
    }

    bool UsesPositions() const override
    {
        return false;
    }

    NodeCountRule GetNodeCountRule() const override
    {
        NodeCountRule rule;
        rule.max = 64;
        rule.doc = "Nodes on the bus.";
        return rule;
    }

    void DeclareArguments(ArgumentTable& table) override
    {
        table.Add("toyRate", "rate", "bus data rate, as an ns-3 DataRate", m_rate)
            .Type(ArgumentType::DataRate)
            .Unit("bit/s");
        table.Add("toyDelay", "delay", "bus propagation delay, a time with unit", m_delay)
            .Type(ArgumentType::Duration);
        table.Add("toyMtu", "mtu", "device MTU", m_mtu).Unit("bytes").Min(68).Max(9000);
        table.Add("toyPreamble", "preamble", "send a preamble (longer frames)", m_preamble);
        table.Add("toyMode", "mode", "how the bus behaves", m_mode)
            .Choices({{"quiet", "quiet"}, {"busy_bus", "busyBus"}});
    }

    uint32_t ResolveNodeCount(uint32_t requested) const override
    {
        return requested == 0 ? 2 : requested;
    }

    std::optional<std::string> Validate(const NetworkRequest& request) const override
    {
        ns3::DataRateValue rate;
        if (!rate.DeserializeFromString(m_rate, ns3::MakeDataRateChecker()))
        {
            return "--toyRate=" + m_rate + " is not a data rate";
        }
        if (request.nodeCount < 2)
        {
            return "--nodes=" + std::to_string(request.nodeCount) + ": a bus needs 2 nodes";
        }
        return std::nullopt;
    }

    BuiltNetwork Build(const NetworkRequest& request, int64_t stream) override
    {
        ns3::Ipv4AddressGenerator::Reset();
        ns3::NodeContainer nodes;
        nodes.Create(request.nodeCount);
        ns3::CsmaHelper csma;
        csma.SetChannelAttribute("DataRate", ns3::StringValue(m_rate));
        csma.SetChannelAttribute("Delay", ns3::StringValue(m_delay));
        csma.SetDeviceAttribute("Mtu", ns3::UintegerValue(m_mtu));
        ns3::NetDeviceContainer devices = csma.Install(nodes);
        ns3::InternetStackHelper stack;
        stack.Install(nodes);
        stack.AssignStreams(nodes, stream);
        ns3::Ipv4AddressHelper addresses("10.1.0.0", "255.255.0.0");
        addresses.Assign(devices);
        ns3::Ipv4GlobalRoutingHelper::PopulateRoutingTables();
        BuiltNetwork built;
        built.nodes = nodes;
        built.addressOf = FirstInterfaceAddresses(nodes);
        built.description = "toy bus of " + std::to_string(request.nodeCount) + " nodes";
        return built;
    }

  private:
    std::string m_rate = "5Mbps";
    std::string m_delay = "1ms";
    uint32_t m_mtu = 1500;
    bool m_preamble = false;
    std::string m_mode = "quiet";
};

} // namespace

int
main(int argc, char* argv[])
{
    std::vector<std::unique_ptr<NetworkBuilder>> builders;
    builders.push_back(std::make_unique<P2pNetworkBuilder>());
    builders.push_back(std::make_unique<WifiNetworkBuilder>());
    builders.push_back(std::make_unique<WaveNetworkBuilder>());
    builders.push_back(std::make_unique<LteNetworkBuilder>());
    builders.push_back(std::make_unique<ToyNetworkBuilder>());
    return ServerMain(argc, argv, std::move(builders), "");
}
