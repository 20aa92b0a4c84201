/*
 * A test tool, not a server: attaches to the bridge's shared-memory channel
 * as the server end (--shmFd=N, as netloop-server does) and relays its bytes,
 * both ways and untouched, to a TCP socket on 127.0.0.1:--relayPort. Behind
 * that socket a test plays a server that lies to the bridge
 * (tests/e2e/ns3_protocol_violations.rs), so the same fake serves every
 * transport: over TCP and Unix a bash script relays the socket it is handed.
 *
 * Prints the port as its ready line, like a server. Exits when either side
 * closes: the bridge's close shuts the socket, the socket's close closes the
 * channel (the bridge reads what is left, then the end).
 */
#include "shm-connection.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace
{

/// How long each side is waited for before the other is looked at.
constexpr uint64_t kSliceNs = 1000000;

int
Fail(const std::string& what)
{
    std::fprintf(stderr, "shm-relay: %s\n", what.c_str());
    return 1;
}

/// The value of --NAME=VALUE among the arguments, or -1.
long
IntArgument(int argc, char** argv, const std::string& name)
{
    const std::string prefix = "--" + name + "=";
    for (int i = 1; i < argc; ++i)
    {
        if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0)
        {
            return std::strtol(argv[i] + prefix.size(), nullptr, 10);
        }
    }
    return -1;
}

bool
SendAll(int socket, const uint8_t* data, std::size_t size)
{
    while (size > 0)
    {
        const ssize_t n = send(socket, data, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        if (n <= 0)
        {
            return false;
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

} // namespace

int
main(int argc, char** argv)
{
    const long fd = IntArgument(argc, argv, "shmFd");
    const long port = IntArgument(argc, argv, "relayPort");
    if (fd < 0 || port <= 0 || port > 65535)
    {
        return Fail("usage: shm-relay --relayPort=PORT --shmFd=N [ignored server arguments]");
    }
    netloop::ShmConnection channel;
    std::string error;
    if (!channel.Open(static_cast<int>(fd), &error))
    {
        return Fail("--shmFd=" + std::to_string(fd) + ": " + error);
    }
    const int socket = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (socket < 0 || connect(socket, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    {
        return Fail("cannot connect to port " + std::to_string(port) + ": " + std::strerror(errno));
    }
    std::printf("%ld\n", port);
    std::fflush(stdout);

    static uint8_t buffer[1 << 16];
    while (true)
    {
        std::size_t received = 0;
        switch (channel.Read(buffer, sizeof buffer, &received, kSliceNs, &error))
        {
        case netloop::ShmConnection::ReadStatus::Data:
            if (!SendAll(socket, buffer, received))
            {
                return Fail("the test's socket is gone");
            }
            break;
        case netloop::ShmConnection::ReadStatus::Eof:
            close(socket);
            return 0;
        case netloop::ShmConnection::ReadStatus::Timeout:
            break;
        case netloop::ShmConnection::ReadStatus::Failed:
            return Fail("reading the channel: " + error);
        }
        pollfd readable{socket, POLLIN, 0};
        if (poll(&readable, 1, received > 0 ? 0 : 1) <= 0)
        {
            continue;
        }
        const ssize_t n = recv(socket, buffer, sizeof buffer, 0);
        if (n <= 0)
        {
            channel.Close(true);
            return n == 0 ? 0 : Fail("reading the test's socket");
        }
        if (!channel.WriteAll(buffer, static_cast<std::size_t>(n), 0, &error))
        {
            return Fail("writing the channel: " + error);
        }
    }
}
