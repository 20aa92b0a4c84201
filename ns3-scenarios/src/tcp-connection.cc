#include "tcp-connection.h"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace netloop
{

namespace
{

using Clock = std::chrono::steady_clock;

std::string
Errno(const std::string& what)
{
    return what + ": " + std::strerror(errno);
}

/// A deadline timeoutNs from now; none for 0.
struct Deadline
{
    explicit Deadline(uint64_t timeoutNs)
        : infinite(timeoutNs == 0),
          at(Clock::now() +
             std::chrono::nanoseconds(std::min<uint64_t>(timeoutNs, uint64_t(1) << 62)))
    {
    }

    /// Milliseconds left for poll(): -1 for no deadline, 0 when passed (rounded up).
    int PollMs() const
    {
        if (infinite)
        {
            return -1;
        }
        const auto left = at - Clock::now();
        if (left <= Clock::duration::zero())
        {
            return 0;
        }
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 1;
        return static_cast<int>(std::min<long long>(ms, 1000LL * 3600 * 24));
    }

    bool infinite;
    Clock::time_point at;
};

/// poll() one descriptor until ready, the deadline, or an error; retries on EINTR.
/// \return 1 ready, 0 timeout, -1 error
int
WaitFor(int fd, short events, const Deadline& deadline)
{
    for (;;)
    {
        pollfd p{fd, events, 0};
        const int ms = deadline.PollMs();
        const int rc = poll(&p, 1, ms);
        if (rc > 0)
        {
            return 1;
        }
        if (rc == 0)
        {
            if (deadline.infinite || deadline.PollMs() == 0)
            {
                return 0;
            }
            continue; // woke up early (ms rounding)
        }
        if (errno != EINTR)
        {
            return -1;
        }
    }
}

/// Tells the core we are spinning (PAUSE on x86): frees resources for the
/// sibling hyper-thread and avoids a memory-order flush when the loop ends.
inline void
CpuRelax()
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

/// One recv() outcome, classified as Read() reports it; EAGAIN is a Timeout.
TcpConnection::ReadStatus
Classify(ssize_t n, std::size_t* received, std::string* error)
{
    if (n > 0)
    {
        *received = static_cast<std::size_t>(n);
        return TcpConnection::ReadStatus::Data;
    }
    if (n == 0)
    {
        return TcpConnection::ReadStatus::Eof;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
    {
        return TcpConnection::ReadStatus::Timeout;
    }
    if (errno == ECONNRESET)
    {
        *error = "the connection was reset by the peer";
        return TcpConnection::ReadStatus::Failed;
    }
    *error = Errno("cannot read");
    return TcpConnection::ReadStatus::Failed;
}

} // namespace

TcpListener::~TcpListener()
{
    Close();
}

bool
TcpListener::Open(uint16_t port, std::string* error)
{
    m_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m_fd < 0)
    {
        *error = Errno("cannot create a TCP socket");
        return false;
    }
    const int one = 1;
    setsockopt(m_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    if (bind(m_fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0)
    {
        *error = Errno("cannot bind 127.0.0.1:" + std::to_string(port));
        Close();
        return false;
    }
    if (listen(m_fd, 1) != 0)
    {
        *error = Errno("cannot listen on 127.0.0.1:" + std::to_string(port));
        Close();
        return false;
    }
    socklen_t length = sizeof(address);
    if (getsockname(m_fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    {
        *error = Errno("cannot read the bound port");
        Close();
        return false;
    }
    m_port = ntohs(address.sin_port);
    return true;
}

uint16_t
TcpListener::GetPort() const
{
    return m_port;
}

int
TcpListener::Accept(uint64_t timeoutNs, std::string* error)
{
    const Deadline deadline(timeoutNs);
    for (;;)
    {
        const int ready = WaitFor(m_fd, POLLIN, deadline);
        if (ready == 0)
        {
            *error = "timeout";
            return -1;
        }
        if (ready < 0)
        {
            *error = Errno("cannot wait for a connection");
            return -1;
        }
        const int fd = accept4(m_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0)
        {
            return fd;
        }
        if (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN)
        {
            *error = Errno("cannot accept a connection");
            return -1;
        }
    }
}

void
TcpListener::Close()
{
    if (m_fd >= 0)
    {
        close(m_fd);
        m_fd = -1;
    }
}

bool
AdoptConnection(int fd, uint16_t* port, std::string* error)
{
    int type = 0;
    socklen_t length = sizeof(type);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0)
    {
        *error = errno == EBADF ? "not an open descriptor" : Errno("not a socket");
        return false;
    }
    if (type != SOCK_STREAM)
    {
        *error = "not a stream socket";
        return false;
    }
    sockaddr_storage peer{};
    length = sizeof(peer);
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0)
    {
        *error = Errno("not a connected socket");
        return false;
    }
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
    {
        *error = Errno("cannot set close-on-exec");
        return false;
    }
    sockaddr_storage local{};
    length = sizeof(local);
    *port = 0;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0)
    {
        if (local.ss_family == AF_INET)
        {
            *port = ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
        }
        else if (local.ss_family == AF_INET6)
        {
            *port = ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port);
        }
    }
    return true;
}

TcpConnection::TcpConnection(int fd)
    : m_fd(fd)
{
    const int one = 1;
    setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

TcpConnection::~TcpConnection()
{
    Close(false);
}

void
TcpConnection::SetSpin(uint64_t spinNs)
{
    m_spinNs = spinNs;
}

TcpConnection::ReadStatus
TcpConnection::Spin(uint8_t* buffer,
                    std::size_t capacity,
                    std::size_t* received,
                    std::string* error)
{
    const auto end = Clock::now() + std::chrono::nanoseconds(m_spinNs);
    for (;;)
    {
        const ssize_t n = recv(m_fd, buffer, capacity, MSG_DONTWAIT);
        const ReadStatus status = Classify(n, received, error);
        if (status != ReadStatus::Timeout || Clock::now() >= end)
        {
            return status;
        }
        for (int i = 0; i < 16; ++i)
        {
            CpuRelax();
        }
    }
}

bool
TcpConnection::SetReceiveTimeout(uint64_t timeoutNs, std::string* error)
{
    if (timeoutNs == m_receiveTimeoutNs)
    {
        return true;
    }
    // A zero timeval means "no timeout", as timeoutNs == 0 does.
    const uint64_t capped = std::min<uint64_t>(timeoutNs, uint64_t(1) << 62);
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(capped / 1000000000);
    tv.tv_usec = static_cast<suseconds_t>((capped % 1000000000 + 999) / 1000);
    if (setsockopt(m_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0)
    {
        *error = Errno("cannot set the receive timeout");
        return false;
    }
    m_receiveTimeoutNs = timeoutNs;
    return true;
}

TcpConnection::ReadStatus
TcpConnection::Read(uint8_t* buffer,
                    std::size_t capacity,
                    std::size_t* received,
                    uint64_t timeoutNs,
                    std::string* error)
{
    // A blocking recv() with SO_RCVTIMEO costs one system call per read; poll()
    // before every recv() doubled that and showed in the round-trip benchmark.
    *received = 0;
    if (m_spinNs > 0)
    {
        const ReadStatus spun = Spin(buffer, capacity, received, error);
        if (spun != ReadStatus::Timeout)
        {
            return spun;
        }
    }
    if (!SetReceiveTimeout(timeoutNs, error))
    {
        return ReadStatus::Failed;
    }
    for (;;)
    {
        const ssize_t n = recv(m_fd, buffer, capacity, 0);
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        return Classify(n, received, error);
    }
}

bool
TcpConnection::WriteAll(const uint8_t* data,
                        std::size_t size,
                        uint64_t timeoutNs,
                        std::string* error)
{
    // Try first, wait only when the socket buffer is full: a frame almost always
    // fits, so this is one system call per frame instead of poll() + send().
    const Deadline deadline(timeoutNs);
    std::size_t sent = 0;
    while (sent < size)
    {
        const ssize_t n = send(m_fd, data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
        {
            sent += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        {
            const int ready = WaitFor(m_fd, POLLOUT, deadline);
            if (ready == 0)
            {
                *error = "the peer did not take our data in time";
                return false;
            }
            if (ready < 0)
            {
                *error = Errno("cannot wait to write");
                return false;
            }
            continue;
        }
        *error = Errno("cannot write");
        return false;
    }
    return true;
}

void
TcpConnection::Close(bool drain)
{
    if (m_fd < 0)
    {
        return;
    }
    if (drain)
    {
        shutdown(m_fd, SHUT_WR);
        const auto end = Clock::now() + std::chrono::seconds(2);
        uint8_t scratch[65536];
        while (Clock::now() < end)
        {
            pollfd p{m_fd, POLLIN, 0};
            const int rc = poll(&p, 1, 100);
            if (rc < 0 && errno == EINTR)
            {
                continue;
            }
            if (rc <= 0)
            {
                break; // quiet for 100 ms, or an error
            }
            const ssize_t n = recv(m_fd, scratch, sizeof(scratch), MSG_DONTWAIT);
            if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN)))
            {
                break; // closed or failed
            }
        }
    }
    close(m_fd);
    m_fd = -1;
}

} // namespace netloop
