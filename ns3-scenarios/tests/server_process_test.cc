/*
 * The netloop-server executable, end to end over TCP: the port line, the
 * command line, a whole session with an exact delivery time, reproducible
 * loss across processes, and every kind of bad input answered with an Error
 * frame (or a clear stderr message) and a non-zero exit, never a crash or a
 * hang.
 */
#include "golden_util.h"
#include "wire.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <set>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace netloop::wire;
using netloop::test::FromHex;
using netloop::test::ReadTable;

namespace
{

const std::string kServer = NETLOOP_SERVER_PATH;
const std::string kGoldenDir = NETLOOP_GOLDEN_DIR;
const std::string kByoExample = NETLOOP_BYO_PATH;
const std::string kToyServer = NETLOOP_TOY_SERVER_PATH;

/// Milliseconds since an arbitrary start.
int64_t
NowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/// One netloop-server child process with its stdout and stderr on pipes.
class ServerProcess
{
  public:
    explicit ServerProcess(const std::vector<std::string>& args,
                           const std::string& program = kServer)
    {
        int out[2];
        int err[2];
        if (pipe(out) != 0 || pipe(err) != 0)
        {
            throw std::runtime_error("pipe failed");
        }
        m_pid = fork();
        if (m_pid < 0)
        {
            throw std::runtime_error("fork failed");
        }
        if (m_pid == 0)
        {
            dup2(out[1], STDOUT_FILENO);
            dup2(err[1], STDERR_FILENO);
            close(out[0]);
            close(out[1]);
            close(err[0]);
            close(err[1]);
            std::vector<char*> argv;
            argv.push_back(const_cast<char*>(program.c_str()));
            for (const auto& a : args)
            {
                argv.push_back(const_cast<char*>(a.c_str()));
            }
            argv.push_back(nullptr);
            execv(program.c_str(), argv.data());
            _exit(127);
        }
        close(out[1]);
        close(err[1]);
        m_out = out[0];
        m_err = err[0];
    }

    ~ServerProcess()
    {
        if (m_pid > 0 && !m_exited)
        {
            kill(m_pid, SIGKILL);
            int status;
            waitpid(m_pid, &status, 0);
        }
        close(m_out);
        close(m_err);
    }

    /// The first line of stdout: the port number.
    uint16_t ReadPort(int timeoutMs = 20000)
    {
        const std::string line = ReadLine(m_out, timeoutMs);
        if (line.empty() || line.find_first_not_of("0123456789") != std::string::npos)
        {
            throw std::runtime_error("expected a port line, got \"" + line +
                                     "\"; stderr: " + Drain(m_err, 0));
        }
        return static_cast<uint16_t>(std::stoul(line));
    }

    /// Waits for the exit; the exit code, or 128 + signal. Throws after the timeout.
    int Wait(int timeoutMs = 20000)
    {
        const int64_t end = NowMs() + timeoutMs;
        for (;;)
        {
            int status = 0;
            const pid_t r = waitpid(m_pid, &status, WNOHANG);
            if (r == m_pid)
            {
                m_exited = true;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            if (NowMs() > end)
            {
                throw std::runtime_error("the server did not exit within " +
                                         std::to_string(timeoutMs) + " ms");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }

    /// Kills the process at once (SIGKILL), as a bridge that gives up does.
    void Kill()
    {
        if (m_pid > 0 && !m_exited)
        {
            kill(m_pid, SIGKILL);
            int status;
            waitpid(m_pid, &status, 0);
            m_exited = true;
        }
    }

    /// Everything on stderr / the rest of stdout (after the process exited).
    std::string Stderr()
    {
        m_stderr += Drain(m_err, 0);
        return m_stderr;
    }

    std::string RestOfStdout()
    {
        return Drain(m_out, 0);
    }

  private:
    static std::string ReadLine(int fd, int timeoutMs)
    {
        std::string line;
        const int64_t end = NowMs() + timeoutMs;
        for (;;)
        {
            pollfd p{fd, POLLIN, 0};
            const int left = static_cast<int>(std::max<int64_t>(0, end - NowMs()));
            if (poll(&p, 1, left) <= 0)
            {
                throw std::runtime_error("no line on stdout in time");
            }
            char c;
            if (read(fd, &c, 1) != 1)
            {
                return line; // closed
            }
            if (c == '\n')
            {
                return line;
            }
            line += c;
        }
    }

    static std::string Drain(int fd, int timeoutMs)
    {
        std::string out;
        char buffer[4096];
        for (;;)
        {
            pollfd p{fd, POLLIN, 0};
            if (poll(&p, 1, timeoutMs) <= 0)
            {
                return out;
            }
            const ssize_t n = read(fd, buffer, sizeof(buffer));
            if (n <= 0)
            {
                return out;
            }
            out.append(buffer, static_cast<std::size_t>(n));
        }
    }

    pid_t m_pid = -1;
    int m_out = -1;
    int m_err = -1;
    bool m_exited = false;
    std::string m_stderr;
};

/// A client connection speaking frames.
class Client
{
  public:
    explicit Client(uint16_t port)
    {
        m_fd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        if (connect(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0)
        {
            throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
        }
        const int one = 1;
        setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }

    ~Client()
    {
        close(m_fd);
    }

    void SendBytes(const std::vector<uint8_t>& bytes)
    {
        std::size_t sent = 0;
        while (sent < bytes.size())
        {
            const ssize_t n = send(m_fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
            if (n <= 0)
            {
                throw std::runtime_error(std::string("send: ") + std::strerror(errno));
            }
            sent += static_cast<std::size_t>(n);
        }
    }

    void Send(const Message& m)
    {
        SendBytes(Encode(m));
    }

    void ShutdownWrite()
    {
        shutdown(m_fd, SHUT_WR);
    }

    /// The next frame; throws on EOF, a decode error or a timeout.
    Message Receive(int timeoutMs = 20000)
    {
        const int64_t end = NowMs() + timeoutMs;
        for (;;)
        {
            DecodeResult r = m_reader.Next();
            if (r.status == DecodeResult::Status::Frame)
            {
                return r.message;
            }
            if (r.status == DecodeResult::Status::Error)
            {
                throw std::runtime_error("bad frame from the server: " + r.error.message);
            }
            if (!ReadSome(end))
            {
                throw std::runtime_error("EOF from the server");
            }
        }
    }

    /// Whether the server closed the connection (with nothing more to read) in time.
    bool AtEof(int timeoutMs = 20000)
    {
        const int64_t end = NowMs() + timeoutMs;
        return m_reader.Buffered() == 0 && !ReadSome(end) && m_reader.Buffered() == 0;
    }

  private:
    /// Reads once; false on EOF. Throws on timeout.
    bool ReadSome(int64_t end)
    {
        pollfd p{m_fd, POLLIN, 0};
        const int left = static_cast<int>(std::max<int64_t>(0, end - NowMs()));
        if (poll(&p, 1, left) <= 0)
        {
            throw std::runtime_error("timeout waiting for the server");
        }
        uint8_t buffer[65536];
        const ssize_t n = recv(m_fd, buffer, sizeof(buffer), 0);
        if (n < 0)
        {
            throw std::runtime_error(std::string("recv: ") + std::strerror(errno));
        }
        if (n == 0)
        {
            return false;
        }
        m_reader.Append(buffer, static_cast<std::size_t>(n));
        return true;
    }

    int m_fd = -1;
    FrameReader m_reader;
};

/// The Error a server sent, or a test failure.
Error
ExpectError(Client& client)
{
    Message m = client.Receive();
    const auto* e = std::get_if<Error>(&m);
    if (!e)
    {
        ADD_FAILURE() << "expected Error, got " << ToString(KindOf(m));
        return Error{};
    }
    return *e;
}

void
Handshake(Client& client, std::vector<FlowSpec> flows)
{
    client.Send(Hello{kProtocolVersion, "netloop test"});
    Message m = client.Receive();
    ASSERT_TRUE(std::holds_alternative<Hello>(m));
    client.Send(Configure{std::move(flows)});
    m = client.Receive();
    ASSERT_TRUE(std::holds_alternative<Configured>(m))
        << (std::holds_alternative<Error>(m) ? std::get<Error>(m).message : "");
}

TEST(ServerProcess, PrintHelpListsEveryArgumentWithItsUnit)
{
    ServerProcess server({"--PrintHelp"});
    EXPECT_EQ(server.Wait(), 0);
    const std::string help = server.RestOfStdout();
    for (const char* arg : {"--network",
                            "--nodes",
                            "--seed",
                            "--run",
                            "--port",
                            "--acceptTimeout",
                            "--idleTimeout",
                            "--spinWait",
                            "--topology",
                            "--dataRate",
                            "--delay",
                            "--queueSize",
                            "--lossRate",
                            "--positions",
                            "--topologyFile",
                            "--bgNodes",
                            "--bgTraffic",
                            "--bgRate",
                            "--txPower",
                            "--propagation",
                            "--phyMode",
                            "--wifiStandard",
                            "--rateManager",
                            "--waveMac",
                            "--bsmNodes",
                            "--bsmRate",
                            "--ues",
                            "--enbs",
                            "--scheduler",
                            "--bandwidth",
                            "--s1uLinkDelay",
                            "--remoteHostDelay",
                            "--pcap",
                            "--ascii",
                            "--flowMonitor",
                            "--netanim",
                            "--dropLog",
                            "--standalone",
                            "--standaloneFlows",
                            "--stopTime",
                            "--info"})
    {
        EXPECT_NE(help.find(arg), std::string::npos) << arg << " missing from:\n" << help;
    }
    for (const char* unit : {"bit/s",
                             "packets",
                             "with unit",
                             "probability",
                             "dBm",
                             "metres",
                             "resource blocks",
                             "MHz"})
    {
        EXPECT_NE(help.find(unit), std::string::npos) << unit;
    }
}

TEST(ServerProcess, BadArgumentValuesExitWithTwoAndSayWhy)
{
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--topology=ring", "--topology=ring"},
        {"--delay=5", "missing unit"},
        {"--delay=0.5ns", "whole number of nanoseconds"},
        {"--dataRate=fast", "--dataRate=fast"},
        {"--lossRate=1.5", "--lossRate"},
        {"--nodes=1", "at least 2 nodes"},
        {"--queueSize=0", "--queueSize=0"},
        {"--seed=0", "--seed=0"},
        {"--network=token-ring", "--network=token-ring is not a network kind"},
        {"--port=70000", "--port=70000"},
        {"--idleTimeout=soon", "--idleTimeout"},
        {"--spinWait=2ms", "--spinWait=2ms: at most 1ms"},
        {"--spinWait=fast", "--spinWait=fast"},
    };
    for (const auto& [arg, needle] : cases)
    {
        ServerProcess server({arg});
        EXPECT_EQ(server.Wait(), 2) << arg;
        const std::string err = server.Stderr();
        EXPECT_NE(err.find(needle), std::string::npos) << arg << ": " << err;
        EXPECT_EQ(server.RestOfStdout(), "") << "no port line for a bad argument";
    }
}

TEST(ServerProcess, NoConnectionWithinTheAcceptTimeout)
{
    const int64_t start = NowMs();
    ServerProcess server({"--acceptTimeout=300ms"});
    server.ReadPort();
    EXPECT_EQ(server.Wait(), 1);
    EXPECT_LT(NowMs() - start, 15000);
    EXPECT_NE(server.Stderr().find("no connection from the bridge"), std::string::npos)
        << server.Stderr();
}

// --connectionFd (what the bridge passes) must name a connected stream socket,
// and excludes --port; the server prints no port line and serves nothing then.
TEST(ServerProcess, AnUnusableConnectionFdIsRefused)
{
    {
        ServerProcess server({"--connectionFd=987"});
        EXPECT_EQ(server.Wait(), 1);
        EXPECT_NE(server.Stderr().find("--connectionFd=987: not an open descriptor"),
                  std::string::npos)
            << server.Stderr();
        EXPECT_EQ(server.RestOfStdout(), "");
    }
    {
        ServerProcess server({"--connectionFd=3", "--port=5000"});
        EXPECT_EQ(server.Wait(), 2);
        EXPECT_NE(server.Stderr().find("--connectionFd and --port"), std::string::npos)
            << server.Stderr();
    }
}

// --shmFd (transport = "shm") must name a netloop shared-memory channel, and
// excludes --connectionFd and --port.
TEST(ServerProcess, AnUnusableShmFdIsRefused)
{
    {
        ServerProcess server({"--shmFd=987"});
        EXPECT_EQ(server.Wait(), 1);
        EXPECT_NE(server.Stderr().find("--shmFd=987: not an open descriptor"), std::string::npos)
            << server.Stderr();
        EXPECT_EQ(server.RestOfStdout(), "");
    }
    {
        // its stdout: open, but a pipe, not a memfd holding a channel
        ServerProcess server({"--shmFd=1"});
        EXPECT_EQ(server.Wait(), 1);
        EXPECT_NE(server.Stderr().find("--shmFd=1: not a netloop shared-memory channel"),
                  std::string::npos)
            << server.Stderr();
        EXPECT_EQ(server.RestOfStdout(), "");
    }
    {
        ServerProcess server({"--shmFd=3", "--connectionFd=4"});
        EXPECT_EQ(server.Wait(), 2);
        EXPECT_NE(server.Stderr().find("--shmFd and --connectionFd or --port"), std::string::npos)
            << server.Stderr();
    }
}

TEST(ServerProcess, AWholeSessionWithAnExactDeliveryTime)
{
    ServerProcess server({"--nodes=3", "--dataRate=8Mbps", "--delay=2ms", "--topology=chain"});
    Client client(server.ReadPort());
    client.Send(Hello{kProtocolVersion, "netloop test"});
    Message m = client.Receive();
    ASSERT_TRUE(std::holds_alternative<Hello>(m));
    EXPECT_EQ(std::get<Hello>(m).protocolVersion, kProtocolVersion);
    EXPECT_NE(std::get<Hello>(m).software.find("ns-3.37"), std::string::npos);

    client.Send(Configure{{FlowSpec{0, 9000, 0, 2, Transport::Udp, true}}});
    m = client.Receive();
    ASSERT_TRUE(std::holds_alternative<Configured>(m));
    EXPECT_EQ(std::get<Configured>(m).nodeCount, 3u);
    EXPECT_NE(std::get<Configured>(m).description.find("p2p chain of 3 nodes: 8Mbps, delay 2ms"),
              std::string::npos)
        << std::get<Configured>(m).description;

    Step step;
    step.until = 100000000;
    step.stopAtDelivery = true;
    step.sends.push_back(SendRequest{0, 7, 1, 2, 1000000, 64});
    client.Send(step);
    m = client.Receive();
    ASSERT_TRUE(std::holds_alternative<StepDone>(m));
    const StepDone& done = std::get<StepDone>(m);
    // Two hops of 2 ms + 94 bytes at 8 Mbps (94 us).
    const uint64_t arrival = 1000000 + 2 * (2000000 + 94000);
    EXPECT_EQ(done.reached, arrival);
    ASSERT_EQ(done.deliveries.size(), 1u);
    EXPECT_TRUE(done.deliveries[0] == (Delivery{0, 7, 1, 2, 1000000, arrival, 64}));

    client.Send(Finish{});
    m = client.Receive();
    ASSERT_TRUE(std::holds_alternative<Summary>(m));
    EXPECT_TRUE(std::get<Summary>(m) == (Summary{arrival, {FlowCounters{0, 1, 1, 0}}}));
    EXPECT_TRUE(client.AtEof());
    EXPECT_EQ(server.Wait(), 0) << server.Stderr();
    EXPECT_EQ(server.RestOfStdout(), "") << "stdout carries the port line only";
}

TEST(ServerProcess, AFrameDeliveredByteByByteIsStillOneFrame)
{
    ServerProcess server({});
    Client client(server.ReadPort());
    for (uint8_t b : Encode(Hello{kProtocolVersion, "slow"}))
    {
        client.SendBytes({b});
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(std::holds_alternative<Hello>(client.Receive()));
}

TEST(ServerProcess, EveryBadGoldenFrameIsAnsweredWithAnErrorFrame)
{
    for (const auto& row : ReadTable(kGoldenDir + "/bad_frames.txt", 3))
    {
        SCOPED_TRACE(row[0]);
        ServerProcess server({});
        Client client(server.ReadPort());
        client.SendBytes(FromHex(row[2]));
        const Error e = ExpectError(client);
        const ErrorCode expected =
            row[1] == "UnsupportedVersion" ? ErrorCode::UnsupportedVersion : ErrorCode::BadFrame;
        EXPECT_EQ(e.code, expected) << e.message;
        if (row[0] == "wrong_version")
        {
            EXPECT_NE(e.message.find("99"), std::string::npos) << e.message;
            EXPECT_NE(e.message.find("version 1"), std::string::npos) << e.message;
        }
        EXPECT_TRUE(client.AtEof());
        EXPECT_EQ(server.Wait(), 1);
        EXPECT_NE(server.Stderr().find(e.message), std::string::npos) << server.Stderr();
    }
}

TEST(ServerProcess, BadFramesAfterTheHandshakeAreAnsweredToo)
{
    // A garbage stream mid-session, and an oversized frame whose payload keeps coming.
    ServerProcess server({});
    Client client(server.ReadPort());
    Handshake(client, {FlowSpec{0, 9000, 0, 1, Transport::Udp, false}});
    std::vector<uint8_t> header = {'N', 'T', 'L', 'P', 1, 0, 4, 0, 0, 0, 0, 2}; // 32 MiB
    client.SendBytes(header);
    client.SendBytes(std::vector<uint8_t>(1 << 20, 0xAB));
    const Error e = ExpectError(client);
    EXPECT_EQ(e.code, ErrorCode::BadFrame);
    EXPECT_NE(e.message.find("exceeds the limit"), std::string::npos) << e.message;
    EXPECT_EQ(server.Wait(), 1);
}

TEST(ServerProcess, WellFormedMessagesOutOfPlaceAreUnexpected)
{
    const std::vector<std::pair<bool, Message>> cases = {
        {false, Step{}}, // before Hello
        {true, Step{}},  // after Hello, before Configure
        {true, Configured{2, "from the client"}},
        {true, StepDone{}},
        {true, Summary{}},
        {true, Finish{}},
    };
    for (const auto& [hello, message] : cases)
    {
        SCOPED_TRACE(ToString(KindOf(message)));
        ServerProcess server({});
        Client client(server.ReadPort());
        if (hello)
        {
            client.Send(Hello{kProtocolVersion, "t"});
            ASSERT_TRUE(std::holds_alternative<Hello>(client.Receive()));
        }
        client.Send(message);
        const Error e = ExpectError(client);
        EXPECT_EQ(e.code, ErrorCode::UnexpectedMessage);
        EXPECT_NE(e.message.find(std::string("unexpected ") + ToString(KindOf(message))),
                  std::string::npos)
            << e.message;
        EXPECT_EQ(server.Wait(), 1);
    }
}

TEST(ServerProcess, ATcpFlowDeliversEveryMessageWholeAndInOrder)
{
    // One TCP flow over the default p2p link: messages of 1..3000 bytes, framed by byte count.
    ServerProcess server({});
    Client client(server.ReadPort());
    Handshake(client, {FlowSpec{0, 9000, 0, 1, Transport::Tcp, false}});
    Step step;
    step.until = 2000000000;
    const std::vector<uint32_t> sizes = {1, 3000, 100, 1460, 7};
    for (uint64_t i = 0; i < sizes.size(); ++i)
    {
        step.sends.push_back(SendRequest{0, i, 0, 1, 1000000 * (i + 1), sizes[i]});
    }
    client.Send(step);
    Message m = client.Receive();
    ASSERT_TRUE(std::holds_alternative<StepDone>(m));
    const StepDone& done = std::get<StepDone>(m);
    ASSERT_EQ(done.deliveries.size(), sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i)
    {
        EXPECT_EQ(done.deliveries[i].number, i);
        EXPECT_EQ(done.deliveries[i].size, sizes[i]);
        EXPECT_GT(done.deliveries[i].received, done.deliveries[i].sent);
    }
    EXPECT_TRUE(done.drops.empty());
    client.Send(Finish{});
    m = client.Receive();
    ASSERT_TRUE(std::holds_alternative<Summary>(m));
    EXPECT_EQ(std::get<Summary>(m).flows[0].sent, sizes.size());
    EXPECT_EQ(std::get<Summary>(m).flows[0].delivered, sizes.size());
    EXPECT_EQ(server.Wait(), 0);
}

TEST(ServerProcess, ASendInThePastIsAnInvalidStepNamingTheTimes)
{
    ServerProcess server({});
    Client client(server.ReadPort());
    Handshake(client, {FlowSpec{0, 9000, 0, 1, Transport::Udp, false}});
    Step step;
    step.until = 2000000;
    client.Send(step);
    ASSERT_TRUE(std::holds_alternative<StepDone>(client.Receive()));
    step.until = 3000000;
    step.sends.push_back(SendRequest{0, 0, 0, 1, 1000000, 10});
    client.Send(step);
    const Error e = ExpectError(client);
    EXPECT_EQ(e.code, ErrorCode::InvalidStep);
    EXPECT_NE(e.message.find("at 1ms is before the time already reached, 2ms"), std::string::npos)
        << e.message;
    EXPECT_EQ(server.Wait(), 1);
}

TEST(ServerProcess, AnErrorFromTheBridgeEndsTheServer)
{
    ServerProcess server({});
    Client client(server.ReadPort());
    Handshake(client, {});
    client.Send(Error{ErrorCode::Internal, "plant diverged"});
    EXPECT_TRUE(client.AtEof());
    EXPECT_EQ(server.Wait(), 1);
    EXPECT_NE(server.Stderr().find("plant diverged"), std::string::npos) << server.Stderr();
}

TEST(ServerProcess, ThePeerClosingIsReportedCleanlyOrMidFrame)
{
    {
        ServerProcess server({});
        Client client(server.ReadPort());
        Handshake(client, {});
        client.ShutdownWrite();
        EXPECT_EQ(server.Wait(), 1);
        EXPECT_NE(server.Stderr().find("closed the connection without Finish"), std::string::npos)
            << server.Stderr();
    }
    {
        ServerProcess server({});
        Client client(server.ReadPort());
        std::vector<uint8_t> hello = Encode(Hello{kProtocolVersion, "half"});
        hello.resize(hello.size() - 3);
        client.SendBytes(hello);
        client.ShutdownWrite();
        EXPECT_EQ(server.Wait(), 1);
        EXPECT_NE(server.Stderr().find("in the middle of a frame (" + std::to_string(hello.size()) +
                                       " bytes received)"),
                  std::string::npos)
            << server.Stderr();
    }
}

TEST(ServerProcess, ASilentBridgeHitsTheIdleTimeout)
{
    ServerProcess server({"--idleTimeout=300ms"});
    Client client(server.ReadPort());
    const Error e = ExpectError(client);
    EXPECT_EQ(e.code, ErrorCode::Internal);
    EXPECT_NE(e.message.find("--idleTimeout"), std::string::npos) << e.message;
    EXPECT_EQ(server.Wait(), 1);
}

/// The numbers of the packets lost in a 200-packet run of a server process.
std::set<uint64_t>
LostInProcess(const std::string& run)
{
    ServerProcess server({"--lossRate=0.25", "--seed=3", "--run=" + run, "--delay=1ms"});
    Client client(server.ReadPort());
    Handshake(client, {FlowSpec{0, 9000, 0, 1, Transport::Udp, false}});
    Step step;
    step.until = 300000000;
    for (uint64_t n = 0; n < 200; ++n)
    {
        step.sends.push_back(SendRequest{0, n, 0, 1, n * 1000000, 32});
    }
    client.Send(step);
    Message m = client.Receive();
    std::set<uint64_t> lost;
    if (!std::holds_alternative<StepDone>(m))
    {
        ADD_FAILURE() << "expected StepDone";
        return lost;
    }
    const StepDone& done = std::get<StepDone>(m);
    for (const DropEvent& d : done.drops)
    {
        EXPECT_EQ(d.reason, DropReason::Phy);
        lost.insert(d.number);
    }
    EXPECT_EQ(done.deliveries.size() + lost.size(), 200u);
    client.Send(Finish{});
    client.Receive();
    EXPECT_EQ(server.Wait(), 0);
    return lost;
}

TEST(ServerProcess, LossIsReproducibleAcrossProcessesAndChangesWithTheRun)
{
    const std::set<uint64_t> a = LostInProcess("1");
    const std::set<uint64_t> b = LostInProcess("1");
    const std::set<uint64_t> c = LostInProcess("2");
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
}

} // namespace

TEST(ServerProcess, DescribePrintsTheSchemaOfEveryKindAsOneJsonLine)
{
    ServerProcess server({"--describe"});
    EXPECT_EQ(server.Wait(), 0) << server.Stderr();
    const std::string out = server.RestOfStdout();
    EXPECT_EQ(out.find('\n'), out.size() - 1) << "one line: " << out;
    EXPECT_EQ(out.rfind("{\"schema\":2,\"tables\":[{\"name\":\"radio\"", 0), 0u) << out;
    EXPECT_NE(out.find("],\"kinds\":[{\"name\":\"p2p\""), std::string::npos) << out;
    for (const char* needle :
         {"{\"name\":\"queueSize\",\"key\":\"queue_size\",\"type\":\"integer\",\"unit\":"
          "\"packets\",\"default\":\"100\",\"min\":1,",
          "{\"name\":\"lossRate\",\"key\":\"loss_rate\",\"type\":\"real\"",
          "\"allowed\":[6,15,25,50,75,100]",
          "{\"value\":\"802.11a\",\"argument\":\"80211a\"}",
          "{\"value\":\"minstrel_ht\",\"argument\":\"minstrelHt\"}",
          "\"node_count\":{\"key\":\"ues\",\"argument\":\"ues\",\"extra\":1,",
          "\"name\":\"wifi\"",
          "\"name\":\"wave\"",
          "\"uses_positions\":false",
          "{\"name\":\"txPower\",\"key\":\"tx_power\",\"type\":\"real\",\"unit\":\"dBm\","
          "\"default\":\"16.0206\",\"min\":-100,\"max\":100,",
          "\"key\":\"nakagami_m[1]\"",
          "{\"name\":\"dropLog\",\"key\":\"drop_log\",\"type\":\"trace_file\"",
          "\"file\":\"drops.csv\"",
          "\"choices\":{\"propagation\":[\"friis\",\"logDistance\",\"twoRayGround\"]}"})
    {
        EXPECT_NE(out.find(needle), std::string::npos) << needle << " in " << out;
    }
    EXPECT_EQ(out.find("\"toy\""), std::string::npos) << "the toy kind is the test server's";
}

TEST(ServerProcess, AKindAddedOnThisSideIsDescribedAndCheckedLikeTheOthers)
{
    {
        ServerProcess server({"--describe"}, kToyServer);
        EXPECT_EQ(server.Wait(), 0) << server.Stderr();
        const std::string out = server.RestOfStdout();
        for (const char* needle :
             {"{\"name\":\"toy\",\"doc\":",
              "{\"name\":\"toyMtu\",\"key\":\"mtu\",\"type\":\"integer\",\"unit\":\"bytes\","
              "\"default\":\"1500\",\"min\":68,\"max\":9000,",
              "{\"value\":\"busy_bus\",\"argument\":\"busyBus\"}"})
        {
            EXPECT_NE(out.find(needle), std::string::npos) << needle << " in " << out;
        }
    }
    {
        ServerProcess server({"--network=toy", "--toyMtu=9000", "--check"}, kToyServer);
        EXPECT_EQ(server.Wait(), 0) << server.Stderr();
    }
    // A declared limit is enforced with a problem that names its argument.
    ServerProcess server({"--network=toy", "--toyMtu=9001", "--check"}, kToyServer);
    EXPECT_EQ(server.Wait(), 2);
    const std::string err = server.Stderr();
    EXPECT_NE(err.find("netloop-problem: {\"argument\":\"toyMtu\",\"message\":\"--toyMtu=9001 "
                       "is more than 9000 bytes\"}\n"),
              std::string::npos)
        << err;
}

TEST(ServerProcess, EveryBadArgumentIsAlsoOneStructuredLine)
{
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--queueSize=0", "queueSize"},
        {"--lossRate=-0.5", "lossRate"},
        {"--network=token-ring", "network"},
        {"--seed=0", "seed"},
        {"--delay=5", "delay"},
        // ns-3's CommandLine: help and exit 1, an abort, a silent misreading.
        {"--bogus=1", "bogus"},
        {"--info=maybe", "info"},
        {"--ns3::PointToPointChannel::Delay=2parsecs", "ns3::PointToPointChannel::Delay"},
        {"--ns3::PointToPointNetDevice::Mtu=big", "ns3::PointToPointNetDevice::Mtu"},
        {"--nodes=3abc", "nodes"},
    };
    for (const auto& [arg, argument] : cases)
    {
        ServerProcess server({arg, "--check"});
        EXPECT_EQ(server.Wait(), 2) << arg;
        const std::string err = server.Stderr();
        EXPECT_EQ(
            err.rfind("netloop-problem: {\"argument\":\"" + argument + "\",\"message\":\"", 0),
            0u)
            << arg << ": " << err;
    }
}

TEST(ServerProcess, SharedTablesAreCheckedAgainstTheKindsUseOfThem)
{
    // (arguments, the argument blamed, words of the message); each with --check.
    const std::vector<std::tuple<std::vector<std::string>, std::string, std::string>> cases = {
        {{"--network=p2p", "--bgNodes=2"}, "bgNodes", "p2p has no background traffic"},
        {{"--network=p2p", "--txPower=20"}, "txPower", "p2p has no radio"},
        {{"--network=lte", "--ues=1", "--txPower=20"}, "txPower", "lte does not take it"},
        {{"--network=lte", "--ues=1", "--propagation=nakagami"},
         "propagation",
         "is not available for lte; use friis, logDistance or twoRayGround"},
        {{"--network=wifi", "--txPower=101"}, "txPower", "--txPower=101 is more than 100 dBm"},
        {{"--network=wifi", "--maxRange=0"}, "maxRange", "--maxRange=0 is not more than 0 m"},
        {{"--network=wifi", "--bgNodes=1", "--bgPacketSize=0"},
         "bgPacketSize",
         "--bgPacketSize=0 is less than 1 bytes"},
    };
    for (const auto& [args, argument, needle] : cases)
    {
        std::vector<std::string> line = args;
        line.push_back("--check");
        ServerProcess server(line);
        EXPECT_EQ(server.Wait(), 2) << args[1];
        const std::string err = server.Stderr();
        EXPECT_EQ(
            err.rfind("netloop-problem: {\"argument\":\"" + argument + "\",\"message\":\"", 0),
            0u)
            << args[1] << ": " << err;
        EXPECT_NE(err.find(needle), std::string::npos) << args[1] << ": " << err;
    }
    // What a kind takes passes: lte's propagation keys, wifi's whole radio.
    for (const std::vector<std::string>& ok :
         {std::vector<std::string>{"--network=lte",
                                   "--ues=1",
                                   "--propagation=twoRayGround",
                                   "--antennaHeight=3",
                                   "--check"},
          std::vector<std::string>{"--network=wifi",
                                   "--txPower=20",
                                   "--propagation=nakagami",
                                   "--bgNodes=2",
                                   "--check"}})
    {
        ServerProcess server(ok);
        EXPECT_EQ(server.Wait(), 0) << ok[1] << ": " << server.Stderr();
    }
}

TEST(ServerProcess, InfoPrintsOneJsonLineAndExits)
{
    ServerProcess server({"--info"});
    EXPECT_EQ(server.Wait(), 0);
    const std::string out = server.RestOfStdout();
    EXPECT_EQ(out.find('\n'), out.size() - 1) << "one line: " << out;
    EXPECT_EQ(out.rfind("{\"software\":\"netloop-ns3-server ", 0), 0u) << out;
    for (const char* needle : {"\"ns3_version\":\"3.37\"",
                               "\"networks\":[\"p2p\",\"wifi\",\"wave\",\"lte\"]",
                               "\"transports\":[\"udp\",\"tcp\"]",
                               "\"wifi\"",
                               "\"wave\"",
                               "\"lte\"",
                               "\"flow-monitor\"",
                               "\"modules\":["})
    {
        EXPECT_NE(out.find(needle), std::string::npos) << needle << " in " << out;
    }
}

TEST(ServerProcess, CheckValidatesEveryArgumentAndBuildsNothing)
{
    {
        ServerProcess server({"--network=lte", "--ues=3", "--check"});
        EXPECT_EQ(server.Wait(), 0) << server.Stderr();
        EXPECT_EQ(server.RestOfStdout(), "") << "no port: nothing is served";
    }

    struct Case
    {
        std::vector<std::string> args;
        std::string named;
    };

    for (const Case& c : std::vector<Case>{
             {{"--network=wifi", "--phyMode=Bogus"}, "--phyMode=Bogus is not a mode of 80211a"},
             {{"--network=wave", "--spacing=-5"}, "--spacing=-5"},
             {{"--network=wave", "--topologyFile=/nonexistent/netloop.topo"}, "--topologyFile"},
             {{"--network=lte", "--bandwidth=7"}, "--bandwidth=7"},
         })
    {
        auto args = c.args;
        args.push_back("--check");
        ServerProcess server(args);
        EXPECT_EQ(server.Wait(), 2) << c.named;
        EXPECT_NE(server.Stderr().find("netloop-server: " + c.named), std::string::npos)
            << server.Stderr();
        EXPECT_EQ(server.RestOfStdout(), "");
    }
}

TEST(ServerProcess, StandaloneRunsTheFlowsAloneAndPrintsAJsonSummary)
{
    ServerProcess server(
        {"--network=wave",
         "--nodes=3",
         "--standalone",
         "--standaloneFlows=0>1:5000:100:10ms;1>0:5001:50:20ms:5ms;2>1:5002:80:10ms::tcp",
         "--stopTime=2s"});
    EXPECT_EQ(server.Wait(), 0) << server.Stderr();
    const std::string out = server.RestOfStdout();
    EXPECT_EQ(out.find('\n'), out.size() - 1) << "one line: " << out;
    for (const char* needle : {"{\"mode\":\"standalone\",\"description\":\"wave 802.11p OCB",
                               "\"stop_time_ns\":2000000000,\"reached_ns\":2000000000",
                               "{\"flow\":0,\"src\":0,\"dst\":1,\"port\":5000,\"transport\":"
                               "\"udp\",\"size\":100,\"period_ns\":10000000,\"start_ns\":0,"
                               "\"sent\":200,\"delivered\":200,\"dropped\":0,\"in_flight\":0,"
                               "\"mean_delay_ns\":",
                               "\"period_ns\":20000000,\"start_ns\":5000000,\"sent\":100,",
                               "\"transport\":\"tcp\"",
                               "\"events\":",
                               "\"wall_seconds\":"})
    {
        EXPECT_NE(out.find(needle), std::string::npos) << needle << "\nin " << out;
    }
}

TEST(ServerProcess, StandaloneRejectsFlowsTheNetworkDoesNotHave)
{
    ServerProcess server(
        {"--network=wifi", "--standalone", "--standaloneFlows=0>5:5000:100:10ms", "--stopTime=1s"});
    EXPECT_EQ(server.Wait(), 2);
    EXPECT_NE(server.Stderr().find("destination node 5 does not exist"), std::string::npos)
        << server.Stderr();
}

TEST(ServerProcess, ABadTopologyFileExitsWithTwoNamingTheLine)
{
    const std::string path = "/tmp/netloop-bad-topology-" + std::to_string(getpid()) + ".txt";
    {
        std::ofstream f(path);
        f << "# two vehicles\n2\n0 0 0\n10 0 zero\n";
    }
    ServerProcess server({"--network=wave", "--topologyFile=" + path});
    EXPECT_EQ(server.Wait(), 2);
    const std::string err = server.Stderr();
    std::remove(path.c_str());
    EXPECT_NE(err.find(path + ":4: \"zero\" is not a finite number"), std::string::npos) << err;
    EXPECT_EQ(server.RestOfStdout(), "");
}

TEST(ServerProcess, AWaveRunWritesItsTracesEvenWhenTheBridgeGoesAway)
{
    char dir[] = "/tmp/netloop-server-traces-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string base = dir;
    ServerProcess server({"--network=wave",
                          "--nodes=2",
                          "--positions=0,0,0;20,0,0",
                          "--dropLog=" + base + "/drops.csv",
                          "--flowMonitor=" + base + "/flows.xml",
                          "--pcap=" + base + "/wave"});
    {
        Client client(server.ReadPort());
        Handshake(client, {FlowSpec{0, 5000, 0, 1, Transport::Udp, false}});
        Step step;
        step.until = 500000000;
        for (uint64_t i = 0; i < 10; ++i)
        {
            step.sends.push_back(SendRequest{0, i, 0, 1, 10000000 * i, 100});
        }
        // Node 1 drives out of range at the start of the step.
        step.kinematics.push_back(NodeKinematics{1, {20, 0, 0}, {0, 0, 0}});
        client.Send(step);
        Message m = client.Receive();
        ASSERT_TRUE(std::holds_alternative<StepDone>(m));
        EXPECT_EQ(std::get<StepDone>(m).deliveries.size(), 10u);
        step = Step{};
        step.until = 1000000000;
        step.sends.push_back(SendRequest{0, 10, 0, 1, 600000000, 100});
        step.kinematics.push_back(NodeKinematics{1, {500, 0, 0}, {0, 0, 0}});
        client.Send(step);
        m = client.Receive();
        ASSERT_TRUE(std::holds_alternative<StepDone>(m));
        ASSERT_EQ(std::get<StepDone>(m).drops.size(), 1u);
        EXPECT_EQ(std::get<StepDone>(m).drops[0].reason, DropReason::Mac);
        // ... and the bridge dies without Finish.
    }
    EXPECT_EQ(server.Wait(), 1);
    EXPECT_NE(server.Stderr().find("closed the connection without Finish"), std::string::npos);
    std::ifstream flows(base + "/flows.xml");
    const std::string xml((std::istreambuf_iterator<char>(flows)),
                          std::istreambuf_iterator<char>());
    EXPECT_NE(xml.find("txPackets=\"11\""), std::string::npos) << xml.substr(0, 400);
    EXPECT_NE(xml.find("</FlowMonitor>"), std::string::npos) << "complete";
    std::ifstream drops(base + "/drops.csv");
    const std::string log((std::istreambuf_iterator<char>(drops)),
                          std::istreambuf_iterator<char>());
    EXPECT_NE(log.find(",0,0,5000,10,0,1,600000000,Mac,1,"), std::string::npos) << log;
    std::ifstream pcap(base + "/wave-0-0.pcap");
    EXPECT_TRUE(pcap.good());
    EXPECT_EQ(std::system(("rm -rf " + base).c_str()), 0);
}

TEST(ServerProcess, TheByoExampleServesAUsersWifiAndCsmaNetwork)
{
    ServerProcess server({"--seed=3", "--run=2"}, kByoExample);
    Client client(server.ReadPort());
    // Wireless node 0 to wired controller 3 (two hops via the gateway) and back.
    Handshake(client,
              {FlowSpec{0, 5000, 0, 3, Transport::Udp, false},
               FlowSpec{1, 5001, 3, 0, Transport::Udp, false}});
    Step step;
    step.until = 1000000000;
    for (uint64_t i = 0; i < 20; ++i)
    {
        step.sends.push_back(SendRequest{0, i, 0, 1, 20000000 * i, 64});
        step.sends.push_back(SendRequest{1, i, 0, 1, 20000000 * i + 5000000, 16});
    }
    client.Send(step);
    Message m = client.Receive();
    ASSERT_TRUE(std::holds_alternative<StepDone>(m));
    const StepDone& done = std::get<StepDone>(m);
    EXPECT_EQ(done.deliveries.size(), 40u);
    for (const Delivery& d : done.deliveries)
    {
        EXPECT_GT(d.received, d.sent + 50000) << "at least the CSMA channel delay";
    }
    client.Send(Finish{});
    m = client.Receive();
    ASSERT_TRUE(std::holds_alternative<Summary>(m));
    EXPECT_EQ(std::get<Summary>(m).flows[0].delivered, 20u);
    EXPECT_EQ(server.Wait(), 0);
}

TEST(ServerProcess, TraceFilesAreCompleteWhenTheSummaryArrives)
{
    const std::string path = "/tmp/netloop-flows-" + std::to_string(getpid()) + ".xml";
    ServerProcess server({"--flowMonitor=" + path});
    Client client(server.ReadPort());
    Handshake(client, {FlowSpec{0, 9000, 0, 1, Transport::Udp, false}});
    Step step;
    step.until = 100000000;
    step.sends.push_back(SendRequest{0, 0, 0, 1, 0, 100});
    client.Send(step);
    ASSERT_TRUE(std::holds_alternative<StepDone>(client.Receive()));
    client.Send(Finish{});
    ASSERT_TRUE(std::holds_alternative<Summary>(client.Receive()));
    server.Kill(); // the bridge may reap the server as soon as it has the Summary
    std::ifstream in(path);
    const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::remove(path.c_str());
    EXPECT_NE(xml.find("txPackets=\"1\""), std::string::npos) << xml;
    EXPECT_NE(xml.find("</FlowMonitor>"), std::string::npos);
}
