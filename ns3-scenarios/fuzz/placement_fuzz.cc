/*
 * libFuzzer target: the placement readers, --positions lists and topology
 * files (ParsePositionList, ParseTopology), on arbitrary text: positions or a
 * message naming the problem (and, for a file, its name), never a crash.
 */
#include "placement.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

using namespace netloop;

namespace
{

void
CheckPositions(const std::variant<std::vector<ns3::Vector>, std::string>& result,
               const char* mustName)
{
    if (const auto* positions = std::get_if<std::vector<ns3::Vector>>(&result))
    {
        for (const auto& p : *positions)
        {
            if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
            {
                std::abort(); // a position that is not a place
            }
        }
    }
    else if (mustName && std::get<std::string>(result).find(mustName) == std::string::npos)
    {
        std::abort(); // an error that does not name the file
    }
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    CheckPositions(ParsePositionList(text), nullptr);
    std::istringstream in(text);
    CheckPositions(ParseTopology(in, "fuzz-topology.txt"), "fuzz-topology.txt");
    return 0;
}
