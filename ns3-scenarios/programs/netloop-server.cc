/*
 * netloop-server: the ns-3 side of netloop.
 *
 * Builds a network (--network=p2p|wifi|wave|lte, --nodes addressable nodes,
 * see README.md for every argument), then serves it to the netloop bridge
 * over TCP on 127.0.0.1, and steps the simulation on request. The bridge hands
 * it an already connected socket (--connectionFd=N), so that the server never
 * listens and no other process can reach it; started by hand, it listens on
 * --port (0: ephemeral), prints the port as the first line of stdout and
 * accepts one connection.
 *
 * Four other modes:
 *   --info          one JSON line (software, ns-3 version, network kinds,
 *                   linked ns-3 modules) on stdout, exit 0; nothing is built.
 *   --describe      one JSON line: the schema of every network kind (each
 *                   argument's scenario key, type, unit, default, limits and
 *                   help; how the node count is set; whether positions
 *                   matter), exit 0. The bridge reads it (README.md).
 *   --check         validate every argument (topology files read), exit 0 or
 *                   2 with the first problem on stderr; nothing is built.
 *                   `netloop check` uses it to check a scenario's network.
 *   --standalone    ns-3 alone, no bridge: periodic flows (--standaloneFlows)
 *                   through the same applications and tags until --stopTime,
 *                   then one JSON line with per-flow counters and mean delays.
 *
 * Defaults: p2p, 2 nodes in a chain, 10Mbps, 2ms, device queue of 100
 * packets, no loss, seed 1, run 1, an ephemeral port, no traces.
 *
 * Reproducing a run: the same arguments (in particular --seed and --run) and
 * the same requests give the same results. Replications change --run, not
 * --seed. Any ns-3 attribute default can be set too, e.g.
 * --ns3::TcpSocket::SegmentSize=1448 (ns-3's CommandLine).
 *
 * Run by hand:  netloop-server --PrintHelp
 *               netloop-server --network=wave --nodes=4 --bsmNodes=all --run=3
 *               netloop-server --network=wifi --standalone \
 *                   --standaloneFlows="0>1:5000:100:10ms" --stopTime=10s
 *
 * Exit codes: 0 after Finish (or after --info / a standalone run); 1 when
 * serving fails (protocol error, the bridge closed or went silent, no
 * connection in time); 2 for a bad argument, with the line
 * `netloop-problem: {"argument":"...","message":"..."}` on stderr: a value out
 * of its limits, and also an unknown argument or a value its type or an ns-3
 * attribute cannot take, which ns-3's CommandLine would refuse with exit code 1
 * (CheckedCommandLine checks every argument before ns-3 reads it).
 */
#include "lte-network.h"
#include "p2p-network.h"
#include "server-main.h"
#include "wave-network.h"
#include "wifi-network.h"

#include <memory>
#include <vector>

#ifndef NETLOOP_NS3_MODULES
#define NETLOOP_NS3_MODULES ""
#endif

int
main(int argc, char* argv[])
{
    std::vector<std::unique_ptr<netloop::NetworkBuilder>> builders;
    builders.push_back(std::make_unique<netloop::P2pNetworkBuilder>());
    builders.push_back(std::make_unique<netloop::WifiNetworkBuilder>());
    builders.push_back(std::make_unique<netloop::WaveNetworkBuilder>());
    builders.push_back(std::make_unique<netloop::LteNetworkBuilder>());
    return netloop::ServerMain(argc, argv, std::move(builders), NETLOOP_NS3_MODULES);
}
