/*
 * Message framing over a byte stream by byte count: the receiving side of a
 * TCP control flow. Tags do not survive TCP segmentation, so the sender's
 * records (tags, send time, size) wait here in send order and each one is
 * complete when as many bytes as it had have arrived after its predecessors.
 */
#ifndef NETLOOP_MESSAGE_FRAMER_H
#define NETLOOP_MESSAGE_FRAMER_H

#include "control-app.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace netloop
{

/**
 * \brief FIFO of messages written into one byte stream, matched to the bytes
 * read from its other end.
 *
 * Push() each message (size >= 1) as it is written; Consume() each chunk of
 * bytes as it is read: it returns the messages whose last byte was in that
 * chunk, in order. No ns-3 dependency beyond ControlPacket.
 */
class MessageFramer
{
  public:
    /// A message enters the stream (its size must be at least 1 byte).
    void Push(const ControlPacket& message);
    /**
     * Bytes arrived; more bytes than were pushed are ignored (and counted in
     * GetExcessBytes()).
     * \return the messages completed by these bytes, in send order
     */
    std::vector<ControlPacket> Consume(uint64_t bytes);
    /// Removes and returns every message not yet complete (e.g. the stream broke).
    std::vector<ControlPacket> TakePending();
    /// \return messages pushed and not yet complete
    std::size_t GetPendingCount() const;
    /// \return bytes of the head message received so far
    uint64_t GetHeadBytes() const;
    /// \return bytes that arrived beyond every pushed message (a framing error)
    uint64_t GetExcessBytes() const;

  private:
    std::deque<ControlPacket> m_pending; //!< in send order
    uint64_t m_headBytes = 0;            //!< bytes of m_pending.front() already received
    uint64_t m_excess = 0;               //!< bytes without a message
};

} // namespace netloop

#endif // NETLOOP_MESSAGE_FRAMER_H
