#include "drop-log.h"

#include <cstring>

namespace netloop
{

namespace
{

/// A CSV field: quoted (with doubled quotes) when it holds a comma, quote or newline.
std::string
Csv(const char* text)
{
    if (std::strpbrk(text, ",\"\n\r") == nullptr)
    {
        return text;
    }
    std::string out = "\"";
    for (const char* c = text; *c; ++c)
    {
        out += *c;
        if (*c == '"')
        {
            out += '"';
        }
    }
    return out + "\"";
}

} // namespace

DropLog::DropLog(const std::string& path)
    : m_path(path),
      m_out(path, std::ios::out | std::ios::trunc)
{
    if (m_out)
    {
        m_out << "time_ns,node,flow,port,number,state_index,state_count,sent_ns,reason,reported,"
                 "source,detail\n";
        m_out.flush();
    }
}

bool
DropLog::IsOpen() const
{
    return m_out.is_open() && m_out.good();
}

const std::string&
DropLog::GetPath() const
{
    return m_path;
}

void
DropLog::Write(uint64_t timeNs,
               uint32_t node,
               std::optional<uint32_t> flow,
               const ControlPacket& tags,
               wire::DropReason reason,
               bool reported,
               const DropOrigin& origin)
{
    m_out << timeNs << ',' << node << ',';
    if (flow)
    {
        m_out << *flow;
    }
    m_out << ',' << tags.port << ',' << tags.number << ',' << tags.stateIndex << ','
          << tags.stateCount << ',' << tags.sentNs << ',' << wire::ToString(reason) << ','
          << (reported ? 1 : 0) << ',' << Csv(origin.source) << ',' << Csv(origin.detail) << '\n';
    ++m_rows;
}

void
DropLog::Flush()
{
    m_out.flush();
}

uint64_t
DropLog::GetRows() const
{
    return m_rows;
}

} // namespace netloop
