#include "checked-command-line.h"

#include "ns3/global-value.h"
#include "ns3/string.h"
#include "ns3/type-id.h"

#include <algorithm>
#include <cstdio>
#include <fcntl.h>
#include <iostream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace netloop
{

namespace
{

/// ns-3's arguments that print something and exit 0 before any other is read
/// (CommandLine::HandleHardOptions); with one of them, nothing is checked.
bool
IsHelpOption(const std::string& name)
{
    for (const char* help : {"PrintHelp",
                             "help",
                             "PrintVersion",
                             "version",
                             "PrintGlobals",
                             "PrintGroups",
                             "PrintGroup",
                             "PrintTypeIds",
                             "PrintAttributes"})
    {
        if (name == help)
        {
            return true;
        }
    }
    return false;
}

/// One argument as ns-3 splits it (CommandLine::GetOptionName).
struct SplitArgument
{
    bool option = false; //!< starts with '-'
    std::string name;    //!< without the dashes, up to '='
    std::string value;   //!< after '='; empty without one
    std::string head;    //!< "--name=value", or "--name" without '='
};

SplitArgument
Split(const std::string& text)
{
    SplitArgument split;
    std::string body = text;
    if (body.rfind("--", 0) == 0)
    {
        body = body.substr(2);
        split.option = true;
    }
    else if (body.rfind('-', 0) == 0)
    {
        body = body.substr(1);
        split.option = true;
    }
    const auto equals = body.find('=');
    split.name = body.substr(0, equals);
    split.value = equals == std::string::npos ? "" : body.substr(equals + 1);
    split.head = "--" + split.name + (equals == std::string::npos ? "" : "=" + split.value);
    return split;
}

/**
 * Whether an attribute or global value of `checker`'s type takes `value`:
 * what Config::SetDefaultFailSafe and SetGlobalFailSafe would decide,
 * without setting anything. Decided in a child process, because many of
 * ns-3's value types abort the process on a value they cannot read whole
 * (ATTRIBUTE_HELPER_CPP's "is not properly formatted", Time's unknown unit).
 */
bool
Takes(const ns3::Ptr<const ns3::AttributeChecker>& checker, const std::string& value)
{
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    const pid_t child = fork();
    if (child < 0)
    {
        // No child to ask: ask here (an abort then still ends the program).
        return checker->CreateValidValue(ns3::StringValue(value)) != nullptr;
    }
    if (child == 0)
    {
        // ns-3's abort message and core dump are not the program's.
        const rlimit noCore{0, 0};
        setrlimit(RLIMIT_CORE, &noCore);
        const int devNull = open("/dev/null", O_WRONLY);
        dup2(devNull, STDOUT_FILENO);
        dup2(devNull, STDERR_FILENO);
        _exit(checker->CreateValidValue(ns3::StringValue(value)) != nullptr ? 0 : 1);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
    {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// What an argument of `checker`'s type must be, for a message.
std::string
ValueType(const ns3::Ptr<const ns3::AttributeChecker>& checker)
{
    if (checker->GetValueTypeName() == "ns3::TimeValue")
    {
        return "a time with unit: s, ms, us, ns, ps, fs, min, h, d or y";
    }
    return checker->GetUnderlyingTypeInformation();
}

/// What an ns-3 attribute or global value says of the argument, if it exists.
std::optional<std::optional<std::string>>
CheckNs3Value(const SplitArgument& split)
{
    const std::string& name = split.name;
    const auto rejects = [&](const ns3::Ptr<const ns3::AttributeChecker>& checker,
                             const std::string& what) -> std::optional<std::string> {
        if (Takes(checker, split.value))
        {
            return std::nullopt;
        }
        return split.head + " is not a value of the ns-3 " + what + " (" + ValueType(checker) + ")";
    };
    const auto colons = name.rfind("::");
    if (colons != std::string::npos)
    {
        ns3::TypeId tid;
        ns3::TypeId::AttributeInformation info;
        if (ns3::TypeId::LookupByNameFailSafe(name.substr(0, colons), &tid) &&
            tid.LookupAttributeByName(name.substr(colons + 2), &info))
        {
            return rejects(info.checker, "attribute " + name);
        }
        return std::nullopt;
    }
    for (auto it = ns3::GlobalValue::Begin(); it != ns3::GlobalValue::End(); ++it)
    {
        if ((*it)->GetName() == name)
        {
            return rejects((*it)->GetChecker(), "global value " + name);
        }
    }
    return std::nullopt;
}

} // namespace

bool
IsNs3TimeText(const std::string& text)
{
    const auto n = text.find_first_not_of("+-0123456789.eE");
    const std::string number = text.substr(0, n);
    if (!CheckValueText<double>(number).has_value())
    {
        if (n == std::string::npos)
        {
            return true;
        }
        const std::string unit = text.substr(n);
        for (const char* known : {"s", "ms", "us", "ns", "ps", "fs", "min", "h", "d", "y"})
        {
            if (unit == known)
            {
                return true;
            }
        }
    }
    return false;
}

CheckedCommandLine::CheckedCommandLine(const std::string& filename)
    : m_cmd(filename)
{
}

void
CheckedCommandLine::Usage(const std::string& usage)
{
    m_cmd.Usage(usage);
}

std::optional<ArgumentProblem>
CheckedCommandLine::Parse(int argc, char* argv[])
{
    return Parse(std::vector<std::string>(argv, argv + argc));
}

std::optional<ArgumentProblem>
CheckedCommandLine::Parse(const std::vector<std::string>& args)
{
    if (auto problem = Check(args))
    {
        return problem;
    }
    m_cmd.Parse(args);
    return std::nullopt;
}

std::optional<ArgumentProblem>
CheckedCommandLine::Check(const std::vector<std::string>& args) const
{
    const std::vector<std::string> given(args.empty() ? args.end() : args.begin() + 1, args.end());
    if (std::any_of(given.begin(), given.end(), [](const std::string& a) {
            const SplitArgument split = Split(a);
            return split.option && IsHelpOption(split.name);
        }))
    {
        return std::nullopt;
    }
    for (const std::string& text : given)
    {
        const SplitArgument split = Split(text);
        if (!split.option)
        {
            return ArgumentProblem{split.name, text + " is not an argument: write --name=value"};
        }
        // ns-3 takes the first added of a name.
        const auto own = std::find_if(m_values.begin(), m_values.end(), [&](const auto& v) {
            return v.first == split.name;
        });
        if (own != m_values.end())
        {
            if (auto wrong = own->second(split.value))
            {
                return ArgumentProblem{split.name, split.head + " " + *wrong};
            }
            continue;
        }
        if (auto ns3Value = CheckNs3Value(split))
        {
            if (*ns3Value)
            {
                return ArgumentProblem{split.name, **ns3Value};
            }
            continue;
        }
        return ArgumentProblem{split.name,
                               split.head + ": no such argument, ns-3 attribute or global value"};
    }
    return std::nullopt;
}

} // namespace netloop
