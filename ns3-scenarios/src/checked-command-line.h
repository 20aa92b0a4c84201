/*
 * ns-3's CommandLine whose complaints come back as ArgumentProblems.
 *
 * ns3::CommandLine prints "Invalid command-line argument: --x=y", then its
 * whole help, and exits with 1 for an argument it does not know, a value it
 * cannot read into the argument's type, or an ns-3 attribute or global
 * value that rejects the value; an attribute of type Time with an unknown
 * unit aborts the process. And it takes "--nodes=3abc" as 3. The bridge
 * must map every complaint to the scenario key it came from, so this class
 * checks each argument first, the way ns-3 is about to read it, and returns
 * the first problem naming the argument (BadArgument prints it as the
 * structured line, exit code 2). Only arguments it found good reach ns-3's
 * parser, which then has nothing to complain about.
 *
 *     netloop::CheckedCommandLine cmd(__FILE__);
 *     cmd.AddValue("distance", "metres between the nodes", distance);
 *     serve.AddArguments(cmd);
 *     if (auto problem = cmd.Parse(argc, argv))
 *     {
 *         return netloop::BadArgument(*problem);
 *     }
 */
#ifndef NETLOOP_CHECKED_COMMAND_LINE_H
#define NETLOOP_CHECKED_COMMAND_LINE_H

#include "network-schema.h"

#include "ns3/command-line.h"
#include "ns3/nstime.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace netloop
{

/**
 * Whether `text` is a time as ns-3's Time(std::string) reads it: a finite
 * number, then one of its units (y, d, h, min, s, ms, us, ns, ps, fs) or
 * none (seconds). ns-3 aborts the process on any other unit.
 */
bool IsNs3TimeText(const std::string& text);

/**
 * Checks a command-line value the way the variable of type T will take it.
 * \return nullopt if good, else what the value must be (e.g. "is not a whole
 *         number from 0 to 4294967295")
 */
template <typename T>
std::optional<std::string>
CheckValueText(const std::string& text)
{
    if constexpr (std::is_same_v<T, bool>)
    {
        // ns-3: no value toggles the flag; true/t/false/f in any case, 1 or 0.
        std::string lower;
        for (char c : text)
        {
            lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        for (const char* ok : {"", "true", "t", "false", "f", "1", "0"})
        {
            if (lower == ok)
            {
                return std::nullopt;
            }
        }
        return std::string("is not true or false");
    }
    else if constexpr (std::is_integral_v<T>)
    {
        // Whole text, no sign on an unsigned type (ns-3 reads "-1" as its
        // largest value and "3abc" as 3), in range.
        using Wide = std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>;
        Wide value = 0;
        const char* end = text.data() + text.size();
        const auto [at, error] = std::from_chars(text.data(), end, value);
        if (text.empty() || error != std::errc() || at != end ||
            value < static_cast<Wide>(std::numeric_limits<T>::min()) ||
            value > static_cast<Wide>(std::numeric_limits<T>::max()))
        {
            return "is not a whole number from " + std::to_string(std::numeric_limits<T>::min()) +
                   " to " + std::to_string(std::numeric_limits<T>::max());
        }
        return std::nullopt;
    }
    else if constexpr (std::is_floating_point_v<T>)
    {
        // Whole text, finite (ns-3's stream refuses nan and inf too).
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])) ||
            end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value))
        {
            return std::string("is not a number");
        }
        return std::nullopt;
    }
    else if constexpr (std::is_same_v<T, std::string>)
    {
        return std::nullopt;
    }
    else if constexpr (std::is_same_v<T, ns3::Time>)
    {
        if (!IsNs3TimeText(text))
        {
            return std::string("is not a time with unit (e.g. 2ms)");
        }
        return std::nullopt;
    }
    else
    {
        // Any other type: ns-3's own reading, into a scratch value.
        T scratch{};
        if (!ns3::CommandLineHelper::UserItemParse<T>(text, scratch))
        {
            return std::string("cannot be read as this argument's value");
        }
        return std::nullopt;
    }
}

/// ns-3's CommandLine with every complaint returned as an ArgumentProblem.
class CheckedCommandLine
{
  public:
    /// \param filename the program's source file (__FILE__), as for ns3::CommandLine
    explicit CheckedCommandLine(const std::string& filename = "");

    /// The program's usage text for --PrintHelp.
    void Usage(const std::string& usage);

    /// ns3::CommandLine::AddValue, remembering how the value must read.
    template <typename T>
    void AddValue(const std::string& name, const std::string& help, T& value)
    {
        m_cmd.AddValue(name, help, value);
        m_values.emplace_back(name, &CheckValueText<T>);
    }

    /**
     * Checks the arguments (Check), then lets ns-3 parse them; ns-3's help
     * options (--PrintHelp, --PrintAttributes=..., ...) print and exit 0 there.
     * \return the first problem; nothing was parsed then
     */
    std::optional<ArgumentProblem> Parse(int argc, char* argv[]);
    /// Parse, with the program name first in `args`.
    std::optional<ArgumentProblem> Parse(const std::vector<std::string>& args);

    /**
     * Checks the arguments (the program name first) without setting
     * anything: each is `--name=value` (or `--name`, or `-name...`), names
     * an argument added here, an ns-3 attribute (`--ns3::Type::Attribute`)
     * or global value, and has a value it takes.
     * \return the first problem, naming the argument
     */
    std::optional<ArgumentProblem> Check(const std::vector<std::string>& args) const;

    /// The ns-3 CommandLine underneath, e.g. for PrintHelp.
    ns3::CommandLine& GetNs3()
    {
        return m_cmd;
    }

  private:
    using ValueCheck = std::optional<std::string> (*)(const std::string&);

    ns3::CommandLine m_cmd;
    std::vector<std::pair<std::string, ValueCheck>> m_values; //!< in the order added
};

} // namespace netloop

#endif // NETLOOP_CHECKED_COMMAND_LINE_H
