/*
 * Blocking TCP on loopback with deadlines (POSIX sockets and poll), for the
 * StepServer. One listener, one connection.
 */
#ifndef NETLOOP_TCP_CONNECTION_H
#define NETLOOP_TCP_CONNECTION_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace netloop
{

/**
 * \brief A listening socket on 127.0.0.1.
 */
class TcpListener
{
  public:
    TcpListener() = default;
    ~TcpListener();
    TcpListener(const TcpListener&) = delete;
    TcpListener& operator=(const TcpListener&) = delete;

    /**
     * Binds 127.0.0.1:port and listens.
     * \param port the port; 0 lets the kernel choose one
     * \param error set to the reason on failure
     * \return whether it listens
     */
    bool Open(uint16_t port, std::string* error);
    /// \return the port it listens on
    uint16_t GetPort() const;
    /**
     * Waits for one connection.
     * \param timeoutNs how long to wait; 0 waits forever
     * \param error set to the reason on failure or timeout
     * \return the connected socket, or -1
     */
    int Accept(uint64_t timeoutNs, std::string* error);
    /// Stops listening.
    void Close();

  private:
    int m_fd = -1;       //!< listening socket
    uint16_t m_port = 0; //!< bound port
};

/**
 * Checks that an inherited descriptor is a connected stream socket and marks it
 * close-on-exec, so that nothing this process starts inherits it.
 * \param fd the descriptor
 * \param port set to its local TCP port (0 when it is not an IP socket)
 * \param error set to the reason when it is not usable
 * \return whether it can be served
 */
bool AdoptConnection(int fd, uint16_t* port, std::string* error);

/**
 * \brief A connected TCP socket with TCP_NODELAY and per-call deadlines.
 */
class TcpConnection
{
  public:
    /// Outcome of Read().
    enum class ReadStatus
    {
        Data,    //!< bytes were read
        Eof,     //!< the peer closed its side
        Timeout, //!< nothing arrived in time
        Failed,  //!< a socket error
    };

    /// Takes ownership of a connected socket and sets TCP_NODELAY.
    explicit TcpConnection(int fd);

    /**
     * Sets the spin budget of Read(): before blocking, poll the socket without
     * blocking for up to spinNs (0, the default, blocks at once). An answer that
     * arrives within the budget is taken without the sleep and wake-up of a
     * blocking wait, which on an idle machine cost far more than the exchange.
     */
    void SetSpin(uint64_t spinNs);
    ~TcpConnection();
    TcpConnection(const TcpConnection&) = delete;
    TcpConnection& operator=(const TcpConnection&) = delete;

    /**
     * Reads what is available, waiting up to timeoutNs (0 = forever) for something.
     * \param buffer where to put the bytes
     * \param capacity its size
     * \param received set to the number of bytes read
     * \param timeoutNs how long to wait
     * \param error set to the reason when Failed
     */
    ReadStatus Read(uint8_t* buffer,
                    std::size_t capacity,
                    std::size_t* received,
                    uint64_t timeoutNs,
                    std::string* error);
    /**
     * Writes all bytes, waiting up to timeoutNs (0 = forever) in total.
     * \return false with error set if the peer is gone or too slow
     */
    bool WriteAll(const uint8_t* data, std::size_t size, uint64_t timeoutNs, std::string* error);
    /**
     * Closes after our last frame. With drain set, first shuts down the sending
     * side and discards what the peer still sends (until it closes, is quiet for
     * 100 ms, or 2 s passed): closing with unread data would reset the connection
     * and could destroy our last frame before the peer read it.
     */
    void Close(bool drain);

  private:
    /**
     * Spins for the budget reading without blocking.
     * \return Data/Eof/Failed as Read(), or Timeout when nothing came in the budget
     */
    ReadStatus Spin(uint8_t* buffer,
                    std::size_t capacity,
                    std::size_t* received,
                    std::string* error);
    /// Sets SO_RCVTIMEO, with a system call only when the value changes.
    bool SetReceiveTimeout(uint64_t timeoutNs, std::string* error);

    int m_fd; //!< connected socket, -1 when closed
    /// The SO_RCVTIMEO in force; UINT64_MAX before the first Read().
    uint64_t m_receiveTimeoutNs = UINT64_MAX;
    /// How long Read() polls before it blocks; 0 blocks at once.
    uint64_t m_spinNs = 0;
};

} // namespace netloop

#endif // NETLOOP_TCP_CONNECTION_H
