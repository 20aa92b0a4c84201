/*
 * byo-example: bring your own ns-3 script. A user's own topology, built the
 * usual ns-3 way, served to the netloop bridge with one library call.
 *
 * The network: a small plant floor. Two wireless sensor/actuator nodes
 * (0 and 1) on an 802.11a ad hoc channel reach a gateway (2), which is also
 * on a 100 Mbps CSMA LAN with two wired controllers (3 and 4):
 *
 *     0 ~~~ wifi ~~~ 2 ===== csma ===== 3, 4
 *     1 ~~~~~~~~~~~~/
 *
 *   10.1.1.0/24 Wi-Fi (0, 1, 2); 10.1.2.0/24 CSMA (2, 3, 4); global routing,
 *   so a flow 0 -> 3 takes two hops through the gateway.
 *
 * Node index in flows = position in the NodeContainer handed to netloop::Serve:
 * here 0..4 as above. The bridge passes --seed and --run (and whatever
 * server.args the scenario lists); this program accepts those, the serving
 * arguments (--port, --acceptTimeout, --idleTimeout) and the trace arguments
 * (--pcap, --ascii, --flowMonitor, --netanim, --dropLog), plus its own
 * --distance (m, default 20) and --csmaDelay (default 50us).
 *
 * Use it from a scenario file with [network.server] binary =
 * "ns3-scenarios/build/byo-example" (see ns3-scenarios/README.md).
 */
#include "serve.h"

#include "ns3/core-module.h"
#include "ns3/csma-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/wifi-module.h"

int
main(int argc, char* argv[])
{
    // 1. Defaults and command line: netloop's serving arguments next to the script's own.
    double distance = 20.0;
    std::string csmaDelay = "50us";
    netloop::ServeArguments serve;
    netloop::CheckedCommandLine cmd(__FILE__); // ns-3's, with problems the bridge can place
    cmd.AddValue("distance", "metres between each wireless node and the gateway", distance);
    cmd.AddValue("csmaDelay", "CSMA channel delay, an ns-3 Time (e.g. 50us)", csmaDelay);
    serve.AddArguments(cmd);
    if (auto problem = cmd.Parse(argc, argv))
    {
        return netloop::BadArgument(*problem); // exit code 2, the argument named
    }
    serve.ApplySeed(); // RngSeedManager seed and run, before anything random is built

    // 2. Nodes.
    ns3::NodeContainer wireless;
    wireless.Create(2);
    ns3::NodeContainer gateway;
    gateway.Create(1);
    ns3::NodeContainer wired;
    wired.Create(2);

    // 3. Wi-Fi: 802.11a ad hoc, log-distance loss, 6 Mbps.
    ns3::YansWifiChannelHelper channel = ns3::YansWifiChannelHelper::Default();
    ns3::YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());
    ns3::WifiHelper wifi;
    wifi.SetStandard(ns3::WIFI_STANDARD_80211a);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode",
                                 ns3::StringValue("OfdmRate6Mbps"),
                                 "ControlMode",
                                 ns3::StringValue("OfdmRate6Mbps"));
    ns3::WifiMacHelper mac;
    mac.SetType("ns3::AdhocWifiMac");
    ns3::NetDeviceContainer wifiDevices =
        wifi.Install(phy, mac, ns3::NodeContainer(wireless, gateway));

    // 4. CSMA LAN.
    ns3::CsmaHelper csma;
    csma.SetChannelAttribute("DataRate", ns3::StringValue("100Mbps"));
    csma.SetChannelAttribute("Delay", ns3::StringValue(csmaDelay));
    ns3::NetDeviceContainer csmaDevices = csma.Install(ns3::NodeContainer(gateway, wired));

    // 5. Mobility: the wireless nodes around the gateway (netloop may move them later).
    ns3::MobilityHelper mobility;
    auto positions = ns3::CreateObject<ns3::ListPositionAllocator>();
    positions->Add(ns3::Vector(-distance, 0, 0));
    positions->Add(ns3::Vector(0, distance, 0));
    positions->Add(ns3::Vector(0, 0, 0));
    positions->Add(ns3::Vector(10, 0, 0));
    positions->Add(ns3::Vector(20, 0, 0));
    mobility.SetPositionAllocator(positions);
    mobility.SetMobilityModel("ns3::ConstantVelocityMobilityModel");
    ns3::NodeContainer all(wireless, gateway, wired);
    mobility.Install(all);

    // 6. Internet: addresses and routes.
    ns3::InternetStackHelper stack;
    stack.Install(all);
    ns3::Ipv4AddressHelper addresses;
    addresses.SetBase("10.1.1.0", "255.255.255.0");
    addresses.Assign(wifiDevices);
    addresses.SetBase("10.1.2.0", "255.255.255.0");
    addresses.Assign(csmaDevices);
    ns3::Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // 7. Random streams, for reproducible runs.
    int64_t stream = 0;
    stream += wifi.AssignStreams(wifiDevices, stream);
    stream += stack.AssignStreams(all, stream);

    // 8. Serve: the one call. Prints the port, steps the simulation for the bridge,
    //    writes the requested traces. Node index = position in `all`.
    const int status = netloop::Serve(all, serve);
    ns3::Simulator::Destroy();
    return status;
}
