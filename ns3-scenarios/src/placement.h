/*
 * Where nodes stand: positions from an inline list or a topology file, the
 * default layouts, and the constant-velocity mobility every placed node gets
 * (so that Step kinematics can drive it).
 */
#ifndef NETLOOP_PLACEMENT_H
#define NETLOOP_PLACEMENT_H

#include "checked-command-line.h"
#include "network-schema.h"

#include "ns3/node-container.h"
#include "ns3/vector.h"

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace netloop
{

/// Command-line values of node placement, shared by every network kind.
struct PlacementOptions
{
    std::string positions;    //!< "x,y,z;x,y,z;..." in metres, or empty
    std::string topologyFile; //!< path of a topology file, or empty
    double spacing = 10.0;    //!< default layout: metres between neighbours on the x axis
    double bgRadius = 20.0;   //!< default layout of background nodes: ring radius, m

    /// Declares --positions, --topologyFile, --spacing and --bgRadius: the shared table
    /// "placement".
    void DeclareArguments(ArgumentTable& table);
    /// Declares the arguments and registers them on `cmd`.
    void AddArguments(CheckedCommandLine& cmd);
};

/**
 * Parses "x,y,z;x,y,z;..." (metres). Whitespace around numbers is allowed; an
 * empty string is an empty list.
 * \return the positions, or a message naming the entry that is wrong
 */
std::variant<std::vector<ns3::Vector>, std::string> ParsePositionList(const std::string& text);

/// The most ReadTopologyFile reads: 16 MiB, the limit netloop applies to
/// every file it reads.
constexpr std::size_t kMaxTopologyFileBytes = 16u << 20;

/**
 * Reads a topology file (at most kMaxTopologyFileBytes):
 *
 *     # comment (anywhere after '#', and blank lines, are ignored)
 *     3                # the node count, alone on the first line
 *     0 0 0            # then one position per node: x y z in metres,
 *     10.5, 0, 1.5     # separated by blanks and/or commas
 *     20 0 0
 *
 * \return the positions, or a message naming the file, the line and the problem
 */
std::variant<std::vector<ns3::Vector>, std::string> ReadTopologyFile(const std::string& path);

/// ReadTopologyFile on a stream already open; path names it in messages (fuzzed apart from files).
std::variant<std::vector<ns3::Vector>, std::string> ParseTopology(std::istream& in,
                                                                  const std::string& path);

/**
 * The explicit positions of the options: those of --positions or of
 * --topologyFile (giving both is an error), or an empty list when neither is
 * given.
 * \return the list, or a message naming the argument
 */
std::variant<std::vector<ns3::Vector>, std::string> ExplicitPositions(
    const PlacementOptions& options);

/**
 * Resolves the positions of `placed` nodes (the addressable ones) followed by
 * `extra` ones (background nodes): the explicit list must give either exactly
 * `placed` positions (the extras go on the default ring) or `placed + extra`.
 * Without a list: placed node i at (i * spacing, 0, 0); extra node k on a ring
 * of radius bgRadius around the centroid of the placed nodes, at angle
 * 2 pi k / extra.
 *
 * \param what names the placed nodes in messages, e.g. "control nodes", "UEs"
 * \return placed + extra positions, or a message naming the argument
 */
std::variant<std::vector<ns3::Vector>, std::string> ResolvePositions(
    const PlacementOptions& options,
    uint32_t placed,
    uint32_t extra,
    const std::string& what);

/**
 * The check every placed network kind makes in NetworkBuilder::Validate: the
 * options parsed (a message, or Parameters with a `background.nodes` member)
 * and the positions they imply for `placedCount(parameters)` placed nodes.
 *
 *
eturn the first problem, or nothing
 */
template <typename Parameters, typename PlacedCount>
std::optional<std::string>
ValidateWithPlacement(const std::variant<Parameters, std::string>& parsed,
                      const PlacementOptions& placement,
                      PlacedCount placedCount,
                      const std::string& what)
{
    if (const auto* error = std::get_if<std::string>(&parsed))
    {
        return *error;
    }
    const Parameters& p = std::get<Parameters>(parsed);
    auto positions = ResolvePositions(placement, placedCount(p), p.background.nodes, what);
    if (const auto* error = std::get_if<std::string>(&positions))
    {
        return *error;
    }
    return std::nullopt;
}

/// The centroid of the first n positions (the origin for n = 0).
ns3::Vector Centroid(const std::vector<ns3::Vector>& positions, std::size_t n);

/**
 * Installs a ConstantVelocityMobilityModel at the given position, velocity 0,
 * on each node (positions.size() must equal nodes.GetN()).
 */
void InstallConstantVelocity(const ns3::NodeContainer& nodes,
                             const std::vector<ns3::Vector>& positions);

/// "(x, y, z)" with up to 6 significant digits, for descriptions and messages.
std::string FormatVector(const ns3::Vector& v);

} // namespace netloop

#endif // NETLOOP_PLACEMENT_H
