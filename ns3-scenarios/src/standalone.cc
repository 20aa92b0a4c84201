#include "standalone.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <sstream>

namespace netloop
{

namespace
{

std::vector<std::string>
Split(const std::string& text, char separator)
{
    std::vector<std::string> out;
    std::string current;
    for (char c : text)
    {
        if (c == separator)
        {
            out.push_back(current);
            current.clear();
        }
        else if (c != ' ' && c != '\t')
        {
            current += c;
        }
    }
    out.push_back(current);
    return out;
}

bool
ParseUnsigned(const std::string& text, uint64_t max, uint64_t* value)
{
    if (text.empty() || text.size() > 19 ||
        text.find_first_not_of("0123456789") != std::string::npos)
    {
        return false;
    }
    *value = std::stoull(text);
    return *value <= max;
}

/// The shortest decimal that reads back as the same double.
std::string
Shortest(double value)
{
    char buffer[64];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
    return ec == std::errc() ? std::string(buffer, end) : std::string("null");
}

} // namespace

std::variant<std::vector<StandaloneFlow>, std::string>
ParseStandaloneFlows(const std::string& text)
{
    std::vector<StandaloneFlow> flows;
    std::size_t index = 0;
    for (const std::string& entry : Split(text, ';'))
    {
        if (entry.empty())
        {
            if (index == 0 && text.find_first_not_of(" \t;") == std::string::npos)
            {
                break;
            }
            return "--standaloneFlows: flow " + std::to_string(index) +
                   " is empty; write src>dst:port:size:period[:start[:udp|tcp]]";
        }
        const std::string what =
            "--standaloneFlows: flow " + std::to_string(index) + " (\"" + entry + "\")";
        const std::vector<std::string> fields = Split(entry, ':');
        if (fields.size() < 4 || fields.size() > 6)
        {
            return what + " has " + std::to_string(fields.size()) +
                   " fields; write src>dst:port:size:period[:start[:udp|tcp]]";
        }
        StandaloneFlow f;
        const auto arrow = fields[0].find('>');
        uint64_t v = 0;
        if (arrow == std::string::npos ||
            !ParseUnsigned(fields[0].substr(0, arrow), 0xFFFFFFFFu, &v))
        {
            return what + ": \"" + fields[0] + "\" is not src>dst (node indices)";
        }
        f.src = static_cast<uint32_t>(v);
        if (!ParseUnsigned(fields[0].substr(arrow + 1), 0xFFFFFFFFu, &v))
        {
            return what + ": \"" + fields[0] + "\" is not src>dst (node indices)";
        }
        f.dst = static_cast<uint32_t>(v);
        if (!ParseUnsigned(fields[1], 65535, &v) || v == 0)
        {
            return what + ": port \"" + fields[1] + "\" is not 1..65535";
        }
        f.port = static_cast<uint16_t>(v);
        if (!ParseUnsigned(fields[2], 0xFFFFFFFFu, &v))
        {
            return what + ": size \"" + fields[2] + "\" is not a number of bytes";
        }
        f.size = static_cast<uint32_t>(v);
        std::string error;
        if (!wire::ParseDuration(fields[3], &f.periodNs, &error) || f.periodNs == 0)
        {
            return what + ": period \"" + fields[3] +
                   "\": " + (error.empty() ? "must be longer than 0" : error);
        }
        // An empty start ("...:10ms::tcp") is 0.
        if (fields.size() >= 5 && !fields[4].empty() &&
            !wire::ParseDuration(fields[4], &f.startNs, &error))
        {
            return what + ": start \"" + fields[4] + "\": " + error;
        }
        if (fields.size() == 6)
        {
            if (fields[5] == "udp")
            {
                f.transport = wire::Transport::Udp;
            }
            else if (fields[5] == "tcp")
            {
                f.transport = wire::Transport::Tcp;
            }
            else
            {
                return what + ": transport \"" + fields[5] + "\" is not udp or tcp";
            }
        }
        flows.push_back(f);
        ++index;
    }
    if (flows.empty())
    {
        return std::string("--standaloneFlows is empty; give at least one flow, e.g. "
                           "0>1:5000:100:10ms");
    }
    return flows;
}

std::variant<StandaloneResult, wire::Error>
RunStandalone(StepEngine& engine,
              const std::vector<StandaloneFlow>& flows,
              uint64_t stopNs,
              uint64_t chunkNs)
{
    const auto started = std::chrono::steady_clock::now();
    wire::Configure configure;
    for (std::size_t i = 0; i < flows.size(); ++i)
    {
        configure.flows.push_back(wire::FlowSpec{static_cast<uint32_t>(i),
                                                 flows[i].port,
                                                 flows[i].src,
                                                 flows[i].dst,
                                                 flows[i].transport,
                                                 false});
    }
    auto configured = engine.Configure(configure);
    if (auto* error = std::get_if<wire::Error>(&configured))
    {
        return *error;
    }
    StandaloneResult result;
    result.delaySumNs.assign(flows.size(), 0.0);
    std::vector<uint64_t> next(flows.size(), 0); // next packet number per flow
    uint64_t now = engine.GetNow();
    bool first = true;
    while (first || now < stopNs)
    {
        first = false;
        const uint64_t until = std::min(stopNs, now + chunkNs);
        wire::Step step;
        step.until = until;
        for (std::size_t i = 0; i < flows.size(); ++i)
        {
            const StandaloneFlow& f = flows[i];
            for (;;)
            {
                const uint64_t t = f.startNs + next[i] * f.periodNs;
                if (t > until || t >= stopNs)
                {
                    break;
                }
                step.sends.push_back(
                    wire::SendRequest{static_cast<uint32_t>(i), next[i], 0, 1, t, f.size});
                ++next[i];
            }
        }
        std::stable_sort(
            step.sends.begin(),
            step.sends.end(),
            [](const wire::SendRequest& a, const wire::SendRequest& b) { return a.time < b.time; });
        auto done = engine.Step(step);
        if (auto* error = std::get_if<wire::Error>(&done))
        {
            return *error;
        }
        for (const wire::Delivery& d : std::get<wire::StepDone>(done).deliveries)
        {
            result.delaySumNs[d.flow] += double(d.received - d.sent);
        }
        now = std::get<wire::StepDone>(done).reached;
    }
    const wire::Summary summary = engine.Finish();
    result.reachedNs = summary.reached;
    result.counters = summary.flows;
    result.events = ns3::Simulator::GetEventCount();
    result.wallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
}

std::string
JsonString(const std::string& text)
{
    std::string out = "\"";
    for (unsigned char c : text)
    {
        switch (c)
        {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20)
            {
                char buffer[8];
                std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
                out += buffer;
            }
            else
            {
                out += static_cast<char>(c);
            }
        }
    }
    return out + "\"";
}

std::string
StandaloneJson(const std::string& description,
               const std::vector<StandaloneFlow>& flows,
               uint64_t stopNs,
               const StandaloneResult& result,
               double buildWallSeconds)
{
    std::ostringstream os;
    os << "{\"mode\":\"standalone\",\"description\":" << JsonString(description)
       << ",\"stop_time_ns\":" << stopNs << ",\"reached_ns\":" << result.reachedNs
       << ",\"flows\":[";
    for (std::size_t i = 0; i < flows.size(); ++i)
    {
        const StandaloneFlow& f = flows[i];
        const wire::FlowCounters& c = result.counters.at(i);
        os << (i ? "," : "") << "{\"flow\":" << i << ",\"src\":" << f.src << ",\"dst\":" << f.dst
           << ",\"port\":" << f.port << ",\"transport\":\""
           << (f.transport == wire::Transport::Tcp ? "tcp" : "udp") << "\",\"size\":" << f.size
           << ",\"period_ns\":" << f.periodNs << ",\"start_ns\":" << f.startNs
           << ",\"sent\":" << c.sent << ",\"delivered\":" << c.delivered
           << ",\"dropped\":" << c.dropped
           << ",\"in_flight\":" << (c.sent - c.delivered - c.dropped) << ",\"mean_delay_ns\":";
        if (c.delivered > 0)
        {
            os << Shortest(result.delaySumNs[i] / double(c.delivered));
        }
        else
        {
            os << "null";
        }
        os << "}";
    }
    os << "],\"events\":" << result.events
       << ",\"build_wall_seconds\":" << Shortest(buildWallSeconds)
       << ",\"wall_seconds\":" << Shortest(result.wallSeconds) << "}";
    return os.str();
}

} // namespace netloop
