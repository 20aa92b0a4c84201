#include "placement.h"

#include "ns3/constant-velocity-mobility-model.h"
#include "ns3/node.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace netloop
{

namespace
{

std::string
Trim(const std::string& s)
{
    const auto begin = s.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos)
    {
        return "";
    }
    const auto end = s.find_last_not_of(" \t\r\n");
    return s.substr(begin, end - begin + 1);
}

/// At most the first kMaxQuotedChars bytes of text, with "..." when cut:
/// an error message quotes the start of a line, not a megabyte.
std::string
Quote(const std::string& text)
{
    constexpr std::size_t kMaxQuotedChars = 80;
    if (text.size() <= kMaxQuotedChars)
    {
        return "\"" + text + "\"";
    }
    return "\"" + text.substr(0, kMaxQuotedChars) + "...\"";
}

/// A finite double that is the whole of text (after trimming).
bool
ParseNumber(const std::string& text, double* value)
{
    const std::string t = Trim(text);
    if (t.empty())
    {
        return false;
    }
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (errno != 0 || end != t.c_str() + t.size() || !std::isfinite(v))
    {
        return false;
    }
    *value = v;
    return true;
}

/// Splits on any of the separator characters, dropping empty fields.
std::vector<std::string>
SplitFields(const std::string& text, const std::string& separators)
{
    std::vector<std::string> fields;
    std::string current;
    for (char c : text)
    {
        if (separators.find(c) != std::string::npos)
        {
            if (!Trim(current).empty())
            {
                fields.push_back(Trim(current));
            }
            current.clear();
        }
        else
        {
            current += c;
        }
    }
    if (!Trim(current).empty())
    {
        fields.push_back(Trim(current));
    }
    return fields;
}

/// Three coordinates from three fields; a message on failure.
std::optional<std::string>
ParseXyz(const std::vector<std::string>& fields, ns3::Vector* v)
{
    if (fields.size() != 3)
    {
        return "expected three coordinates x, y, z in metres, found " +
               std::to_string(fields.size());
    }
    double xyz[3];
    for (std::size_t i = 0; i < 3; ++i)
    {
        if (!ParseNumber(fields[i], &xyz[i]))
        {
            return Quote(fields[i]) + " is not a finite number";
        }
    }
    *v = ns3::Vector(xyz[0], xyz[1], xyz[2]);
    return std::nullopt;
}

} // namespace

void
PlacementOptions::DeclareArguments(ArgumentTable& table)
{
    table
        .Add("positions",
             "positions",
             "node positions, in node index order (lte: the UEs), optionally followed by the "
             "background nodes' positions",
             positions)
        .Type(ArgumentType::Positions)
        .Unit("m")
        .Unset("node i at (i * spacing, 0, 0)");
    table
        .Add("topologyFile",
             "file",
             "a topology file instead of positions: the node count on its first line, then one "
             "\"x y z\" position (metres) per line; '#' starts a comment (at most 16 MiB)",
             topologyFile)
        .Type(ArgumentType::Path)
        .Unset("none");
    table
        .Add("spacing",
             "spacing",
             "default layout: distance between neighbours on the x axis",
             spacing)
        .Unit("m")
        .Min(0);
    table
        .Add("bgRadius",
             "background_radius",
             "default layout of background nodes: radius of their ring around the centroid of "
             "the addressable nodes",
             bgRadius)
        .Unit("m")
        .Min(0);
}

void
PlacementOptions::AddArguments(CheckedCommandLine& cmd)
{
    ArgumentTable table;
    DeclareArguments(table);
    table.Register(cmd, "placement");
}

std::variant<std::vector<ns3::Vector>, std::string>
ParsePositionList(const std::string& text)
{
    std::vector<ns3::Vector> out;
    if (Trim(text).empty())
    {
        return out;
    }
    std::size_t start = 0;
    std::size_t index = 0;
    for (;;)
    {
        const std::size_t end = text.find(';', start);
        const std::string entry =
            text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (Trim(entry).empty())
        {
            // A trailing ';' is tolerated; an empty entry in the middle is not.
            if (end != std::string::npos || index == 0)
            {
                return "position " + std::to_string(index) + " is empty; write \"x,y,z;x,y,z\"";
            }
            break;
        }
        ns3::Vector v;
        if (auto problem = ParseXyz(SplitFields(entry, ","), &v))
        {
            return "position " + std::to_string(index) + " (" + Quote(Trim(entry)) +
                   "): " + *problem;
        }
        out.push_back(v);
        ++index;
        if (end == std::string::npos)
        {
            break;
        }
        start = end + 1;
    }
    return out;
}

std::variant<std::vector<ns3::Vector>, std::string>
ReadTopologyFile(const std::string& path)
{
    std::ifstream file(path, std::ios::binary);
    if (!file)
    {
        return "cannot open topology file " + path;
    }
    // Read at most one byte past the limit, so that /dev/zero or a runaway
    // file is an error and not memory growing without end.
    std::string text;
    char chunk[65536];
    while (text.size() <= kMaxTopologyFileBytes && file.read(chunk, sizeof chunk).gcount() > 0)
    {
        text.append(chunk, static_cast<std::size_t>(file.gcount()));
    }
    if (file.bad())
    {
        return "cannot read topology file " + path;
    }
    if (text.size() > kMaxTopologyFileBytes)
    {
        return path + ": larger than " + std::to_string(kMaxTopologyFileBytes >> 20) +
               " MiB, the most the server reads from a topology file";
    }
    std::istringstream in(text);
    return ParseTopology(in, path);
}

std::variant<std::vector<ns3::Vector>, std::string>
ParseTopology(std::istream& in, const std::string& path)
{
    std::vector<ns3::Vector> out;
    std::optional<uint64_t> count;
    std::string line;
    uint64_t lineNumber = 0;
    auto error = [&path, &lineNumber](const std::string& problem) {
        return path + ":" + std::to_string(lineNumber) + ": " + problem;
    };
    while (std::getline(in, line))
    {
        ++lineNumber;
        const std::string content = Trim(line.substr(0, line.find('#')));
        if (content.empty())
        {
            continue;
        }
        if (!count)
        {
            const bool digits = content.find_first_not_of("0123456789") == std::string::npos;
            if (!digits || content.size() > 9)
            {
                return error("the first line must be the node count, a whole number; found " +
                             Quote(content));
            }
            count = std::stoull(content);
            if (*count == 0)
            {
                return error("the node count is 0");
            }
            continue;
        }
        if (out.size() == *count)
        {
            return error("more positions than the " + std::to_string(*count) +
                         " nodes declared on the first line");
        }
        ns3::Vector v;
        if (auto problem = ParseXyz(SplitFields(content, " \t,"), &v))
        {
            return error(*problem);
        }
        out.push_back(v);
    }
    if (!count)
    {
        return path + ": no node count (the file has no content)";
    }
    if (out.size() != *count)
    {
        return path + ":" + std::to_string(lineNumber) + ": the file declares " +
               std::to_string(*count) + " nodes but gives " + std::to_string(out.size()) +
               " positions";
    }
    return out;
}

std::variant<std::vector<ns3::Vector>, std::string>
ExplicitPositions(const PlacementOptions& options)
{
    const bool list = !Trim(options.positions).empty();
    const bool file = !Trim(options.topologyFile).empty();
    if (list && file)
    {
        return std::string("--positions and --topologyFile both give positions; use one");
    }
    if (file)
    {
        auto read = ReadTopologyFile(options.topologyFile);
        if (auto* problem = std::get_if<std::string>(&read))
        {
            return "--topologyFile: " + *problem;
        }
        return read;
    }
    auto parsed = ParsePositionList(options.positions);
    if (auto* problem = std::get_if<std::string>(&parsed))
    {
        return "--positions: " + *problem;
    }
    return parsed;
}

ns3::Vector
Centroid(const std::vector<ns3::Vector>& positions, std::size_t n)
{
    ns3::Vector c(0, 0, 0);
    if (n == 0)
    {
        return c;
    }
    for (std::size_t i = 0; i < n; ++i)
    {
        c.x += positions[i].x;
        c.y += positions[i].y;
        c.z += positions[i].z;
    }
    return ns3::Vector(c.x / n, c.y / n, c.z / n);
}

std::variant<std::vector<ns3::Vector>, std::string>
ResolvePositions(const PlacementOptions& options,
                 uint32_t placed,
                 uint32_t extra,
                 const std::string& what)
{
    if (!(options.spacing >= 0.0) || !std::isfinite(options.spacing))
    {
        std::ostringstream os;
        os << "--spacing=" << options.spacing << " must be a finite distance >= 0 m";
        return os.str();
    }
    if (!(options.bgRadius >= 0.0) || !std::isfinite(options.bgRadius))
    {
        std::ostringstream os;
        os << "--bgRadius=" << options.bgRadius << " must be a finite distance >= 0 m";
        return os.str();
    }
    auto given = ExplicitPositions(options);
    if (auto* problem = std::get_if<std::string>(&given))
    {
        return *problem;
    }
    std::vector<ns3::Vector> positions = std::get<std::vector<ns3::Vector>>(given);
    const char* source = options.topologyFile.empty() ? "--positions" : "--topologyFile";
    if (positions.empty())
    {
        for (uint32_t i = 0; i < placed; ++i)
        {
            positions.emplace_back(i * options.spacing, 0.0, 0.0);
        }
    }
    else if (positions.size() != placed && positions.size() != std::size_t(placed) + extra)
    {
        std::string expected = std::to_string(placed) + " (the " + what + ")";
        if (extra > 0)
        {
            expected += " or " + std::to_string(placed + extra) + " (the " + what + ", then the " +
                        std::to_string(extra) + " background nodes)";
        }
        return std::string(source) + " gives " + std::to_string(positions.size()) +
               " positions; expected " + expected;
    }
    if (positions.size() == placed)
    {
        const ns3::Vector centre = Centroid(positions, placed);
        for (uint32_t k = 0; k < extra; ++k)
        {
            const double angle = 2.0 * M_PI * k / extra;
            positions.emplace_back(centre.x + options.bgRadius * std::cos(angle),
                                   centre.y + options.bgRadius * std::sin(angle),
                                   centre.z);
        }
    }
    return positions;
}

void
InstallConstantVelocity(const ns3::NodeContainer& nodes, const std::vector<ns3::Vector>& positions)
{
    for (uint32_t i = 0; i < nodes.GetN(); ++i)
    {
        auto model = ns3::CreateObject<ns3::ConstantVelocityMobilityModel>();
        model->SetPosition(positions.at(i));
        model->SetVelocity(ns3::Vector(0, 0, 0));
        nodes.Get(i)->AggregateObject(model);
    }
}

std::string
FormatVector(const ns3::Vector& v)
{
    std::ostringstream os;
    os << "(" << v.x << ", " << v.y << ", " << v.z << ")";
    return os.str();
}

} // namespace netloop
