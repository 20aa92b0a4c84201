/*
 * netloop wire protocol, C++ side (docs/design.md §7).
 *
 * Mirrors protocol/src/message.rs and protocol/src/frame.rs byte for byte:
 * a 12-byte header (magic "NTLP", u16 version, u16 kind, u32 payload length,
 * all little-endian) and a bincode payload with fixed-width little-endian
 * integers. Layout rules, field by field in declaration order:
 *
 *   u8/u16/u32/u64   1/2/4/8 bytes, little-endian
 *   bool             1 byte, 0 or 1 (anything else is malformed)
 *   f64              8 bytes, IEEE-754 binary64, little-endian
 *   SimTime          u64 nanoseconds
 *   String           u64 byte length, then UTF-8 bytes (invalid UTF-8 is malformed)
 *   Vec<T>           u64 element count, then the elements
 *   [f64; 3]         three f64, no length
 *   fieldless enum   u32 variant index, in declaration order
 *
 * This file has no ns-3 dependency: it is sans-IO, like the Rust crate.
 * protocol/golden/{frames,bad_frames}.txt pin the bytes; tests/wire_golden_test.cc
 * checks this codec against them.
 */
#ifndef NETLOOP_WIRE_H
#define NETLOOP_WIRE_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace netloop
{
namespace wire
{

/// The protocol version this build speaks; frames of another version are refused.
constexpr uint16_t kProtocolVersion = 1;
/// Length of the fixed frame header in bytes.
constexpr std::size_t kHeaderLength = 12;
/// Largest payload either side accepts (16 MiB), checked from the header alone.
constexpr uint32_t kMaxPayload = 16u * 1024u * 1024u;
/// The four magic bytes that open every frame.
constexpr std::array<uint8_t, 4> kMagic = {'N', 'T', 'L', 'P'};

/// The frame header's kind field; values are part of the wire format.
enum class MessageKind : uint16_t
{
    Hello = 1,
    Configure = 2,
    Configured = 3,
    Step = 4,
    StepDone = 5,
    Finish = 6,
    Summary = 7,
    Error = 8,
    Rules = 9,
    RulesInstalled = 10,
};

/// Transport a flow uses inside ns-3 (u32 variant index on the wire).
enum class Transport : uint32_t
{
    Udp = 0,
    Tcp = 1,
};

/// Where ns-3 saw a packet die (u32 variant index on the wire).
enum class DropReason : uint32_t
{
    Queue = 0,   //!< a device or traffic-control queue was full
    Phy = 1,     //!< reception failed at the PHY (error model, interference, too weak)
    Mac = 2,     //!< the MAC gave up, e.g. retry limit reached
    Routing = 3, //!< IP found no route (or TTL expired)
    Other = 4,   //!< anything else
};

/// Machine-readable class of an Error message (u32 variant index on the wire).
enum class ErrorCode : uint32_t
{
    BadFrame = 0,           //!< the frame could not be decoded
    UnsupportedVersion = 1, //!< the peer speaks another protocol version
    UnexpectedMessage = 2,  //!< a well-formed message that is not allowed at this point
    InvalidConfig = 3,      //!< the configuration does not fit the network
    InvalidStep = 4,        //!< a step that cannot be carried out
    Internal = 5,           //!< anything else inside the server
};

/// Name of a kind, as the Rust side prints it ("Hello", "StepDone", ...).
const char* ToString(MessageKind kind);
/// Name of a transport ("Udp", "Tcp").
const char* ToString(Transport transport);
/// Name of a drop reason ("Queue", "Phy", ...).
const char* ToString(DropReason reason);
/// Name of an error code ("BadFrame", ...).
const char* ToString(ErrorCode code);
/// The kind with this header value, if there is one.
std::optional<MessageKind> KindFromWire(uint16_t value);

/// First message in each direction; the bridge speaks first.
struct Hello
{
    uint16_t protocolVersion = kProtocolVersion; //!< the sender's protocol version
    std::string software;                        //!< free text naming the sender
};

/// One directed packet stream between two nodes.
struct FlowSpec
{
    uint32_t flow = 0; //!< index of the flow in Configure::flows
    uint16_t port = 0; //!< port at the destination; also the PacketPortTag
    uint32_t src = 0;  //!< sending node index
    uint32_t dst = 0;  //!< receiving node index
    Transport transport = Transport::Udp;
    bool stopOnDelivery = false; //!< a delivery on this flow ends an event-driven step
};

/// Loop and flow structure, sent once after the handshake.
struct Configure
{
    std::vector<FlowSpec> flows;
};

/// The server's answer to Configure.
struct Configured
{
    uint32_t nodeCount = 0;
    std::string description; //!< one line describing the network
};

/// One packet for ns-3 to send.
struct SendRequest
{
    uint32_t flow = 0;
    uint64_t number = 0;     //!< per-flow packet number (PacketNumTag)
    uint16_t stateIndex = 0; //!< StateNumTag index
    uint16_t stateCount = 0; //!< StateNumTag count
    uint64_t time = 0;       //!< absolute send time in ns
    uint32_t size = 0;       //!< application payload bytes
};

/// Position (m) and velocity (m/s) of a node.
struct NodeKinematics
{
    uint32_t node = 0;
    std::array<double, 3> position{};
    std::array<double, 3> velocity{};
};

/// Advance the network.
struct Step
{
    uint64_t until = 0;          //!< absolute time in ns
    bool stopAtDelivery = false; //!< stop at the first delivery on a stop-on-delivery flow
    std::vector<SendRequest> sends;
    std::vector<NodeKinematics> kinematics;
};

/// A packet handed to the receiving application.
struct Delivery
{
    uint32_t flow = 0;
    uint64_t number = 0;
    uint16_t stateIndex = 0;
    uint16_t stateCount = 0;
    uint64_t sent = 0;     //!< from SendTimeTag, ns
    uint64_t received = 0; //!< ns
    uint32_t size = 0;     //!< payload bytes
};

/// A packet lost inside ns-3.
struct DropEvent
{
    uint32_t flow = 0;
    uint64_t number = 0;
    uint16_t stateIndex = 0;
    uint16_t stateCount = 0;
    uint64_t sent = 0; //!< ns
    uint64_t time = 0; //!< when ns-3 dropped it, ns
    uint32_t node = 0; //!< where ns-3 dropped it
    DropReason reason = DropReason::Other;
};

/// The server's answer to Step.
struct StepDone
{
    uint64_t reached = 0; //!< time reached, ns
    std::vector<Delivery> deliveries;
    std::vector<DropEvent> drops;
};

/// End of the run.
struct Finish
{
};

/// Per-flow packet counters kept by the server.
struct FlowCounters
{
    uint32_t flow = 0;
    uint64_t sent = 0;
    uint64_t delivered = 0;
    uint64_t dropped = 0;
};

/// The server's answer to Finish.
struct Summary
{
    uint64_t reached = 0;
    std::vector<FlowCounters> flows;
};

/// Either side reports a fatal problem; the connection closes afterwards.
struct Error
{
    ErrorCode code = ErrorCode::Internal;
    std::string message;
};

/**
 * "On the first delivery of a packet of triggerFlow, send a packet of
 * answerFlow delay later", with the receiver's policies deciding whether a
 * delivery is answered (see AnswerRule in protocol/src/message.rs).
 */
struct AnswerRule
{
    uint32_t triggerFlow = 0;
    uint32_t answerFlow = 0;
    uint64_t delay = 0; //!< ns from the delivery to the answer's send
    uint32_t size = 0;  //!< payload bytes of each answer packet
    uint16_t stateCount = 1;
    uint64_t maxDelay = UINT64_MAX; //!< ns; UINT64_MAX: no limit
    bool dropStale = false;
    uint64_t lastTrigger = 0; //!< ns; later deliveries are not answered
};

/// Installs answer rules, once, before the first Step.
struct Rules
{
    std::vector<AnswerRule> rules;
};

/// The server's answer to Rules.
struct RulesInstalled
{
    uint32_t count = 0;
};

bool operator==(const Hello& a, const Hello& b);
bool operator==(const FlowSpec& a, const FlowSpec& b);
bool operator==(const Configure& a, const Configure& b);
bool operator==(const Configured& a, const Configured& b);
bool operator==(const SendRequest& a, const SendRequest& b);
bool operator==(const NodeKinematics& a, const NodeKinematics& b);
bool operator==(const Step& a, const Step& b);
bool operator==(const Delivery& a, const Delivery& b);
bool operator==(const DropEvent& a, const DropEvent& b);
bool operator==(const StepDone& a, const StepDone& b);
bool operator==(const Finish& a, const Finish& b);
bool operator==(const FlowCounters& a, const FlowCounters& b);
bool operator==(const Summary& a, const Summary& b);
bool operator==(const Error& a, const Error& b);
bool operator==(const AnswerRule& a, const AnswerRule& b);
bool operator==(const Rules& a, const Rules& b);
bool operator==(const RulesInstalled& a, const RulesInstalled& b);

/// Any message; the alternative order matches MessageKind's values.
using Message = std::variant<Hello,
                             Configure,
                             Configured,
                             Step,
                             StepDone,
                             Finish,
                             Summary,
                             Error,
                             Rules,
                             RulesInstalled>;

/// The kind of a message.
MessageKind KindOf(const Message& message);

/// Class of a malformed frame; names match the Rust FrameError variants.
enum class WireErrorClass
{
    BadMagic,
    UnsupportedVersion,
    UnknownKind,
    Oversized,
    TruncatedPayload,
    MalformedPayload,
    TrailingBytes,
};

/// Name of an error class ("BadMagic", ...), as in protocol/golden/bad_frames.txt.
const char* ToString(WireErrorClass errorClass);

/// A frame that cannot be decoded; fatal for the connection.
struct WireError
{
    WireErrorClass errorClass = WireErrorClass::MalformedPayload;
    std::string message;       //!< what is wrong, for the user
    uint16_t foundVersion = 0; //!< the peer's version (UnsupportedVersion only)
};

/// The parsed, validated header of a frame.
struct FrameHeader
{
    MessageKind kind = MessageKind::Hello;
    uint32_t length = 0;
};

/**
 * \brief Outcome of decoding a buffer that may hold a partial frame.
 *
 * Incomplete is an expected runtime condition (read more bytes); Error is a
 * malformed frame and fatal for the connection.
 */
struct DecodeResult
{
    /// What the buffer held.
    enum class Status
    {
        Frame,      //!< a whole frame: message and consumed are set
        Incomplete, //!< a valid prefix: at least needed bytes in total are required
        Error,      //!< a malformed frame: error is set
    };

    Status status = Status::Incomplete;
    Message message;
    std::size_t consumed = 0;
    std::size_t needed = 0;
    WireError error;
};

/**
 * Validates as much of a header as the buffer holds: the magic byte by byte,
 * then the version, the kind and the length, each as soon as its bytes are
 * there, so a garbage stream is rejected after its first bytes.
 *
 * \param data the bytes received so far
 * \param size how many there are
 * \param maxPayload the payload limit; clamped to kMaxPayload
 * \param header set when the whole header is there and valid
 * \return an error, or nullopt (then header is set iff size >= kHeaderLength)
 */
std::optional<WireError> DecodeHeader(const uint8_t* data,
                                      std::size_t size,
                                      uint32_t maxPayload,
                                      std::optional<FrameHeader>* header);

/// Decodes the payload of a frame whose header has been validated.
std::variant<Message, WireError> DecodePayload(const FrameHeader& header,
                                               const uint8_t* payload,
                                               std::size_t size);

/// Decodes the frame at the start of a buffer, if it is all there.
DecodeResult Decode(const uint8_t* data, std::size_t size, uint32_t maxPayload = kMaxPayload);

/**
 * Appends one frame holding the message to out.
 *
 * \param message the message
 * \param out the buffer; left unchanged on failure
 * \param maxPayload the payload limit; clamped to kMaxPayload
 * \param error set to the reason on failure (oversized, or a string that is not UTF-8)
 * \return whether the frame was appended
 */
bool EncodeInto(const Message& message,
                std::vector<uint8_t>& out,
                uint32_t maxPayload,
                std::string* error);

/// One frame holding the message; throws std::length_error / std::invalid_argument
/// when EncodeInto would fail. For tests and messages known to be small.
std::vector<uint8_t> Encode(const Message& message);

/**
 * \brief Incremental frame reader over a growing byte buffer.
 *
 * Append whatever the socket delivered, then call Next() until it stops
 * returning frames. Bytes of a decoded frame are consumed; a partial frame
 * stays buffered.
 */
class FrameReader
{
  public:
    /// \param maxPayload payload limit, clamped to kMaxPayload
    explicit FrameReader(uint32_t maxPayload = kMaxPayload);
    /// Adds received bytes.
    void Append(const uint8_t* data, std::size_t size);
    /// The next frame, Incomplete, or the error that makes the stream unusable.
    DecodeResult Next();
    /// Bytes received but not yet consumed by a frame.
    std::size_t Buffered() const;

  private:
    uint32_t m_maxPayload;       //!< payload limit
    std::vector<uint8_t> m_data; //!< received bytes
    std::size_t m_start = 0;     //!< first byte not yet consumed
};

/// Whether a byte string is valid UTF-8 (the same rules as Rust's str::from_utf8).
bool IsValidUtf8(const std::string& text);

/// A time in ns as the Rust SimTime prints it: "0s", "10ms", "1500us", "7ns".
std::string FormatTime(uint64_t ns);

/**
 * Parses a duration the way protocol/src/time.rs does: a non-negative decimal
 * and a unit (ns, us, µs, ms, s, min, h), e.g. "10ms", "1.5 s", "250us"; a bare
 * "0" is accepted; ASCII white space around the number and the unit is ignored. Exact:
 * no detour through floating point. protocol/time/golden/durations.txt is the grammar by
 * example, checked against both parsers.
 *
 * \param text the string
 * \param ns set to the value on success
 * \param error set to the reason on failure
 * \return whether it parsed
 */
bool ParseDuration(const std::string& text, uint64_t* ns, std::string* error);

} // namespace wire
} // namespace netloop

#endif // NETLOOP_WIRE_H
