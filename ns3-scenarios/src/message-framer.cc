#include "message-framer.h"

namespace netloop
{

void
MessageFramer::Push(const ControlPacket& message)
{
    m_pending.push_back(message);
}

std::vector<ControlPacket>
MessageFramer::Consume(uint64_t bytes)
{
    std::vector<ControlPacket> done;
    while (bytes > 0 && !m_pending.empty())
    {
        const uint64_t missing = m_pending.front().size - m_headBytes;
        if (bytes < missing)
        {
            m_headBytes += bytes;
            return done;
        }
        bytes -= missing;
        done.push_back(m_pending.front());
        m_pending.pop_front();
        m_headBytes = 0;
    }
    m_excess += bytes;
    return done;
}

std::vector<ControlPacket>
MessageFramer::TakePending()
{
    std::vector<ControlPacket> out(m_pending.begin(), m_pending.end());
    m_pending.clear();
    m_headBytes = 0;
    return out;
}

std::size_t
MessageFramer::GetPendingCount() const
{
    return m_pending.size();
}

uint64_t
MessageFramer::GetHeadBytes() const
{
    return m_headBytes;
}

uint64_t
MessageFramer::GetExcessBytes() const
{
    return m_excess;
}

} // namespace netloop
