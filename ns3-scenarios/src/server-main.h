/*
 * netloop-server's main, given its network kinds (see programs/netloop-server.cc
 * for the arguments, modes and exit codes).
 */
#ifndef NETLOOP_SERVER_MAIN_H
#define NETLOOP_SERVER_MAIN_H

#include "network-builder.h"

#include <memory>
#include <string>
#include <vector>

namespace netloop
{

/**
 * Parses the command line, builds the network of the --network kind among
 * `builders` and serves it (or --info, --describe, --check, --standalone).
 * \param ns3Modules the linked ns-3 modules, comma-separated, for --info
 * \return the process exit code
 */
int ServerMain(int argc,
               char* argv[],
               std::vector<std::unique_ptr<NetworkBuilder>> builders,
               const std::string& ns3Modules);

} // namespace netloop

#endif // NETLOOP_SERVER_MAIN_H
