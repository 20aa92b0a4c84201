#include "shm-connection.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace netloop
{

namespace
{

using Clock = std::chrono::steady_clock;

constexpr uint32_t kMagic = 0x4D534C4E; // "NLSM" little-endian
constexpr uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = 64;
constexpr std::size_t kControlBytes = 192;
constexpr std::size_t kDataOffset = 512;

template <typename T>
T
Load(const T* p)
{
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

template <typename T>
void
Store(T* p, T v)
{
    __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

inline void
CpuRelax()
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

/// Sleeps while *word == expected, at most timeoutNs (0: no limit). A shared
/// futex: the word lives in a mapping two processes share.
void
FutexWait(uint32_t* word, uint32_t expected, uint64_t timeoutNs)
{
    timespec ts{};
    timespec* limit = nullptr;
    if (timeoutNs > 0)
    {
        ts.tv_sec = static_cast<time_t>(timeoutNs / 1000000000);
        ts.tv_nsec = static_cast<long>(timeoutNs % 1000000000);
        limit = &ts;
    }
    syscall(SYS_futex, word, FUTEX_WAIT, expected, limit, nullptr, 0);
}

void
FutexWake(uint32_t* word)
{
    syscall(SYS_futex, word, FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

/// Nanoseconds left until end (0 when passed); UINT64_MAX for no deadline.
uint64_t
Left(bool infinite, Clock::time_point end)
{
    if (infinite)
    {
        return UINT64_MAX;
    }
    const auto left = end - Clock::now();
    if (left <= Clock::duration::zero())
    {
        return 0;
    }
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(left).count());
}

} // namespace

ShmConnection::~ShmConnection()
{
    Close(false);
}

bool
ShmConnection::Open(int fd, std::string* error)
{
    struct stat info
    {
    };

    if (fstat(fd, &info) != 0)
    {
        *error = errno == EBADF ? "not an open descriptor" : std::string(std::strerror(errno));
        return false;
    }
    const auto length = static_cast<std::size_t>(info.st_size);
    if (!S_ISREG(info.st_mode) || length < kDataOffset)
    {
        *error = "not a netloop shared-memory channel (a memfd of at least 512 bytes)";
        return false;
    }
    void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED)
    {
        *error = std::string("cannot map it: ") + std::strerror(errno);
        return false;
    }
    // The mapping stays valid without the descriptor; nothing we start inherits it.
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    uint32_t magic = 0;
    uint32_t version = 0;
    uint64_t capacity = 0;
    std::memcpy(&magic, base, 4);
    std::memcpy(&version, static_cast<uint8_t*>(base) + 4, 4);
    std::memcpy(&capacity, static_cast<uint8_t*>(base) + 8, 8);
    if (magic != kMagic || version != kVersion || capacity < 64 ||
        (capacity & (capacity - 1)) != 0 || kDataOffset + 2 * capacity != length)
    {
        munmap(base, length);
        *error = "not a netloop shared-memory channel of version " + std::to_string(kVersion) +
                 " (magic, version or size differ)";
        return false;
    }
    m_base = static_cast<uint8_t*>(base);
    m_length = length;
    m_capacity = capacity;
    return true;
}

void
ShmConnection::SetSpin(uint64_t spinNs)
{
    m_spinNs = spinNs;
}

ShmConnection::RingControl*
ShmConnection::Control(int ring) const
{
    return reinterpret_cast<RingControl*>(m_base + kHeaderBytes + ring * kControlBytes);
}

uint8_t*
ShmConnection::Data(int ring) const
{
    return m_base + kDataOffset + ring * m_capacity;
}

// The server reads ring 0 (bridge -> server) and writes ring 1.

bool
ShmConnection::Readable() const
{
    const RingControl* ring = Control(0);
    return Load(&ring->head) != Load(&ring->tail) || Load(&ring->closed) != 0;
}

long
ShmConnection::Take(uint8_t* buffer, std::size_t capacity)
{
    RingControl* ring = Control(0);
    const uint64_t tail = Load(&ring->tail);
    uint64_t head = Load(&ring->head);
    if (head == tail)
    {
        if (Load(&ring->closed) == 0)
        {
            return -1;
        }
        head = Load(&ring->head); // bytes written before the close come first
        if (head == tail)
        {
            return 0;
        }
    }
    const std::size_t n = std::min<uint64_t>(head - tail, capacity);
    if (n == 0)
    {
        return 0;
    }
    const std::size_t start = tail & (m_capacity - 1);
    const std::size_t first = std::min<std::size_t>(n, m_capacity - start);
    std::memcpy(buffer, Data(0) + start, first);
    std::memcpy(buffer + first, Data(0), n - first);
    Store(&ring->tail, tail + n);
    if (Load(&ring->writerWaiting) != 0)
    {
        __atomic_fetch_add(&ring->spaceSeq, 1, __ATOMIC_SEQ_CST);
        FutexWake(&ring->spaceSeq);
    }
    return static_cast<long>(n);
}

ShmConnection::ReadStatus
ShmConnection::Read(uint8_t* buffer,
                    std::size_t capacity,
                    std::size_t* received,
                    uint64_t timeoutNs,
                    std::string* error)
{
    *received = 0;
    if (m_base == nullptr)
    {
        *error = "the shared-memory channel is closed";
        return ReadStatus::Failed;
    }
    const bool infinite = timeoutNs == 0;
    const auto end =
        Clock::now() + std::chrono::nanoseconds(std::min<uint64_t>(timeoutNs, uint64_t(1) << 62));
    if (m_spinNs > 0 && !Readable())
    {
        const auto spinEnd = Clock::now() + std::chrono::nanoseconds(m_spinNs);
        while (!Readable() && Clock::now() < spinEnd)
        {
            for (int i = 0; i < 16; ++i)
            {
                CpuRelax();
            }
        }
    }
    RingControl* ring = Control(0);
    for (;;)
    {
        Store(&ring->readerWaiting, 1u);
        const uint32_t seen = Load(&ring->dataSeq);
        const long n = Take(buffer, capacity);
        if (n >= 0)
        {
            Store(&ring->readerWaiting, 0u);
            if (n == 0)
            {
                return ReadStatus::Eof;
            }
            *received = static_cast<std::size_t>(n);
            return ReadStatus::Data;
        }
        const uint64_t left = Left(infinite, end);
        if (left == 0)
        {
            Store(&ring->readerWaiting, 0u);
            return ReadStatus::Timeout;
        }
        FutexWait(&ring->dataSeq, seen, left == UINT64_MAX ? 0 : left);
    }
}

bool
ShmConnection::WriteAll(const uint8_t* data,
                        std::size_t size,
                        uint64_t timeoutNs,
                        std::string* error)
{
    if (m_base == nullptr)
    {
        *error = "the shared-memory channel is closed";
        return false;
    }
    const bool infinite = timeoutNs == 0;
    const auto end =
        Clock::now() + std::chrono::nanoseconds(std::min<uint64_t>(timeoutNs, uint64_t(1) << 62));
    RingControl* ring = Control(1);
    std::size_t sent = 0;
    while (sent < size)
    {
        Store(&ring->writerWaiting, 1u);
        const uint32_t seen = Load(&ring->spaceSeq);
        const uint64_t head = Load(&ring->head);
        const uint64_t free = m_capacity - (head - Load(&ring->tail));
        if (free > 0)
        {
            Store(&ring->writerWaiting, 0u);
            const std::size_t n = std::min<uint64_t>(free, size - sent);
            const std::size_t start = head & (m_capacity - 1);
            const std::size_t first = std::min<std::size_t>(n, m_capacity - start);
            std::memcpy(Data(1) + start, data + sent, first);
            std::memcpy(Data(1), data + sent + first, n - first);
            Store(&ring->head, head + n);
            if (Load(&ring->readerWaiting) != 0)
            {
                __atomic_fetch_add(&ring->dataSeq, 1, __ATOMIC_SEQ_CST);
                FutexWake(&ring->dataSeq);
            }
            sent += n;
            continue;
        }
        const uint64_t left = Left(infinite, end);
        if (left == 0)
        {
            Store(&ring->writerWaiting, 0u);
            *error = "the peer did not take our data in time";
            return false;
        }
        FutexWait(&ring->spaceSeq, seen, left == UINT64_MAX ? 0 : left);
    }
    return true;
}

void
ShmConnection::Close(bool /* drain: nothing is lost by closing a mapping */)
{
    if (m_base == nullptr)
    {
        return;
    }
    RingControl* ring = Control(1);
    Store(&ring->closed, 1u);
    __atomic_fetch_add(&ring->dataSeq, 1, __ATOMIC_SEQ_CST);
    FutexWake(&ring->dataSeq);
    munmap(m_base, m_length);
    m_base = nullptr;
}

} // namespace netloop
