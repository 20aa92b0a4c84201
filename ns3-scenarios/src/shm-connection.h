/*
 * The shared-memory channel to the bridge (--shmFd, transport = "shm"): two
 * byte rings in a memfd the bridge made, one per direction, carrying exactly
 * the bytes a socket would. Waiting polls the ring (--spinWait) and then
 * sleeps on a futex in the mapping; a writer wakes the reader only when it
 * says it sleeps, so a spinning exchange makes no system call at all.
 *
 * The layout is the bridge's (bridge/ns3-client/src/shm.rs) and must change in both
 * places at once:
 *   0    header: magic "NLSM" (u32), version (u32), ring capacity (u64)
 *   64   ring 0 control, bridge -> server (192 bytes, see RingControl)
 *   256  ring 1 control, server -> bridge
 *   512  ring 0 bytes; 512 + capacity: ring 1 bytes
 */
#ifndef NETLOOP_SHM_CONNECTION_H
#define NETLOOP_SHM_CONNECTION_H

#include "tcp-connection.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace netloop
{

/**
 * \brief The server's end of the bridge's shared-memory channel, with the
 * interface of TcpConnection (StepServer serves either).
 */
class ShmConnection
{
  public:
    using ReadStatus = TcpConnection::ReadStatus;

    ShmConnection() = default;
    ~ShmConnection();
    ShmConnection(const ShmConnection&) = delete;
    ShmConnection& operator=(const ShmConnection&) = delete;

    /**
     * Maps the channel in an inherited memfd and checks its header; marks the
     * descriptor close-on-exec.
     * \return false with error set when it is not a netloop channel
     */
    bool Open(int fd, std::string* error);
    /// Poll the ring this long in Read() before sleeping (0: sleep at once).
    void SetSpin(uint64_t spinNs);
    /**
     * Reads what is there, waiting up to timeoutNs (0 = forever) for
     * something. Eof once the bridge closed its side and all was read.
     */
    ReadStatus Read(uint8_t* buffer,
                    std::size_t capacity,
                    std::size_t* received,
                    uint64_t timeoutNs,
                    std::string* error);
    /// Writes all bytes, waiting up to timeoutNs (0 = forever) for room in total.
    bool WriteAll(const uint8_t* data, std::size_t size, uint64_t timeoutNs, std::string* error);
    /// Closes our direction (the bridge reads what is left, then the end) and unmaps.
    void Close(bool drain);

  private:
    /// One direction's counters and futex words (bridge/ns3-client/src/shm.rs RingControl).
    struct RingControl
    {
        alignas(64) uint64_t head; //!< bytes written (the writer's)
        uint32_t dataSeq;          //!< futex the reader sleeps on
        alignas(64) uint64_t tail; //!< bytes read (the reader's)
        uint32_t spaceSeq;         //!< futex the writer sleeps on
        alignas(64) uint32_t readerWaiting;
        uint32_t writerWaiting;
        uint32_t closed; //!< the writer will write no more
    };

    static_assert(sizeof(RingControl) == 192, "the layout shared with the bridge");

    RingControl* Control(int ring) const;
    uint8_t* Data(int ring) const;
    /// Copies out what is there: -1 when empty and open, 0 when empty and closed.
    long Take(uint8_t* buffer, std::size_t capacity);
    /// Whether Take() would return at once.
    bool Readable() const;

    uint8_t* m_base = nullptr; //!< the mapping
    std::size_t m_length = 0;  //!< its size
    uint64_t m_capacity = 0;   //!< bytes per ring (a power of two)
    uint64_t m_spinNs = 0;     //!< Read()'s spin budget
};

} // namespace netloop

#endif // NETLOOP_SHM_CONNECTION_H
