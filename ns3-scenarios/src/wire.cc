/*
 * netloop wire codec: see wire.h for the layout.
 *
 * Every read checks the remaining length first. Classification follows the
 * Rust decoder (bincode 2 through serde): fields are decoded in order and the
 * first problem wins; running out of bytes (including a length prefix that
 * claims more bytes than are left) is TruncatedPayload; a bool other than 0/1,
 * an enum index out of range or a string that is not UTF-8 is MalformedPayload;
 * bytes left after the message are TrailingBytes.
 */
#include "wire.h"

#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace netloop
{
namespace wire
{

const char*
ToString(MessageKind kind)
{
    switch (kind)
    {
    case MessageKind::Hello:
        return "Hello";
    case MessageKind::Configure:
        return "Configure";
    case MessageKind::Configured:
        return "Configured";
    case MessageKind::Step:
        return "Step";
    case MessageKind::StepDone:
        return "StepDone";
    case MessageKind::Finish:
        return "Finish";
    case MessageKind::Summary:
        return "Summary";
    case MessageKind::Error:
        return "Error";
    case MessageKind::Rules:
        return "Rules";
    case MessageKind::RulesInstalled:
        return "RulesInstalled";
    }
    return "UnknownKind";
}

const char*
ToString(Transport transport)
{
    switch (transport)
    {
    case Transport::Udp:
        return "Udp";
    case Transport::Tcp:
        return "Tcp";
    }
    return "UnknownTransport";
}

const char*
ToString(DropReason reason)
{
    switch (reason)
    {
    case DropReason::Queue:
        return "Queue";
    case DropReason::Phy:
        return "Phy";
    case DropReason::Mac:
        return "Mac";
    case DropReason::Routing:
        return "Routing";
    case DropReason::Other:
        return "Other";
    }
    return "UnknownDropReason";
}

const char*
ToString(ErrorCode code)
{
    switch (code)
    {
    case ErrorCode::BadFrame:
        return "BadFrame";
    case ErrorCode::UnsupportedVersion:
        return "UnsupportedVersion";
    case ErrorCode::UnexpectedMessage:
        return "UnexpectedMessage";
    case ErrorCode::InvalidConfig:
        return "InvalidConfig";
    case ErrorCode::InvalidStep:
        return "InvalidStep";
    case ErrorCode::Internal:
        return "Internal";
    }
    return "UnknownErrorCode";
}

const char*
ToString(WireErrorClass errorClass)
{
    switch (errorClass)
    {
    case WireErrorClass::BadMagic:
        return "BadMagic";
    case WireErrorClass::UnsupportedVersion:
        return "UnsupportedVersion";
    case WireErrorClass::UnknownKind:
        return "UnknownKind";
    case WireErrorClass::Oversized:
        return "Oversized";
    case WireErrorClass::TruncatedPayload:
        return "TruncatedPayload";
    case WireErrorClass::MalformedPayload:
        return "MalformedPayload";
    case WireErrorClass::TrailingBytes:
        return "TrailingBytes";
    }
    return "UnknownWireError";
}

std::optional<MessageKind>
KindFromWire(uint16_t value)
{
    if (value >= static_cast<uint16_t>(MessageKind::Hello) &&
        value <= static_cast<uint16_t>(MessageKind::RulesInstalled))
    {
        return static_cast<MessageKind>(value);
    }
    return std::nullopt;
}

bool
operator==(const Hello& a, const Hello& b)
{
    return a.protocolVersion == b.protocolVersion && a.software == b.software;
}

bool
operator==(const FlowSpec& a, const FlowSpec& b)
{
    return a.flow == b.flow && a.port == b.port && a.src == b.src && a.dst == b.dst &&
           a.transport == b.transport && a.stopOnDelivery == b.stopOnDelivery;
}

bool
operator==(const Configure& a, const Configure& b)
{
    return a.flows == b.flows;
}

bool
operator==(const Configured& a, const Configured& b)
{
    return a.nodeCount == b.nodeCount && a.description == b.description;
}

bool
operator==(const SendRequest& a, const SendRequest& b)
{
    return a.flow == b.flow && a.number == b.number && a.stateIndex == b.stateIndex &&
           a.stateCount == b.stateCount && a.time == b.time && a.size == b.size;
}

bool
operator==(const NodeKinematics& a, const NodeKinematics& b)
{
    // Bitwise, so that a NaN that went through the codec compares equal to itself.
    return a.node == b.node &&
           std::memcmp(a.position.data(), b.position.data(), sizeof(a.position)) == 0 &&
           std::memcmp(a.velocity.data(), b.velocity.data(), sizeof(a.velocity)) == 0;
}

bool
operator==(const Step& a, const Step& b)
{
    return a.until == b.until && a.stopAtDelivery == b.stopAtDelivery && a.sends == b.sends &&
           a.kinematics == b.kinematics;
}

bool
operator==(const Delivery& a, const Delivery& b)
{
    return a.flow == b.flow && a.number == b.number && a.stateIndex == b.stateIndex &&
           a.stateCount == b.stateCount && a.sent == b.sent && a.received == b.received &&
           a.size == b.size;
}

bool
operator==(const DropEvent& a, const DropEvent& b)
{
    return a.flow == b.flow && a.number == b.number && a.stateIndex == b.stateIndex &&
           a.stateCount == b.stateCount && a.sent == b.sent && a.time == b.time &&
           a.node == b.node && a.reason == b.reason;
}

bool
operator==(const StepDone& a, const StepDone& b)
{
    return a.reached == b.reached && a.deliveries == b.deliveries && a.drops == b.drops;
}

bool
operator==(const Finish&, const Finish&)
{
    return true;
}

bool
operator==(const FlowCounters& a, const FlowCounters& b)
{
    return a.flow == b.flow && a.sent == b.sent && a.delivered == b.delivered &&
           a.dropped == b.dropped;
}

bool
operator==(const Summary& a, const Summary& b)
{
    return a.reached == b.reached && a.flows == b.flows;
}

bool
operator==(const Error& a, const Error& b)
{
    return a.code == b.code && a.message == b.message;
}

bool
operator==(const AnswerRule& a, const AnswerRule& b)
{
    return a.triggerFlow == b.triggerFlow && a.answerFlow == b.answerFlow && a.delay == b.delay &&
           a.size == b.size && a.stateCount == b.stateCount && a.maxDelay == b.maxDelay &&
           a.dropStale == b.dropStale && a.lastTrigger == b.lastTrigger;
}

bool
operator==(const Rules& a, const Rules& b)
{
    return a.rules == b.rules;
}

bool
operator==(const RulesInstalled& a, const RulesInstalled& b)
{
    return a.count == b.count;
}

MessageKind
KindOf(const Message& message)
{
    // The variant's alternatives are declared in MessageKind order, from 1.
    return static_cast<MessageKind>(message.index() + 1);
}

bool
IsValidUtf8(const std::string& text)
{
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::size_t i = 0;
    while (i < n)
    {
        const unsigned char c = s[i];
        if (c < 0x80)
        {
            ++i;
            continue;
        }
        std::size_t len;
        unsigned char lo = 0x80;
        unsigned char hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
        {
            len = 2;
        }
        else if (c >= 0xE0 && c <= 0xEF)
        {
            len = 3;
            if (c == 0xE0)
            {
                lo = 0xA0; // no overlong encodings
            }
            else if (c == 0xED)
            {
                hi = 0x9F; // no surrogates
            }
        }
        else if (c >= 0xF0 && c <= 0xF4)
        {
            len = 4;
            if (c == 0xF0)
            {
                lo = 0x90; // no overlong encodings
            }
            else if (c == 0xF4)
            {
                hi = 0x8F; // nothing above U+10FFFF
            }
        }
        else
        {
            return false;
        }
        if (n - i < len)
        {
            return false;
        }
        if (s[i + 1] < lo || s[i + 1] > hi)
        {
            return false;
        }
        for (std::size_t k = 2; k < len; ++k)
        {
            if (s[i + k] < 0x80 || s[i + k] > 0xBF)
            {
                return false;
            }
        }
        i += len;
    }
    return true;
}

namespace
{

/// Appends little-endian values to a byte vector.
class Writer
{
  public:
    explicit Writer(std::vector<uint8_t>& out)
        : m_out(out)
    {
    }

    template <typename T>
    void Uint(T value)
    {
        static_assert(std::is_unsigned_v<T>, "unsigned integers only");
        for (std::size_t i = 0; i < sizeof(T); ++i)
        {
            m_out.push_back(static_cast<uint8_t>(value >> (8 * i)));
        }
    }

    void Bool(bool value)
    {
        m_out.push_back(value ? 1 : 0);
    }

    void F64(double value)
    {
        uint64_t bits;
        std::memcpy(&bits, &value, sizeof(bits));
        Uint(bits);
    }

    /// Fails (returns false) for a string that is not UTF-8: the peer could not decode it.
    bool String(const std::string& value)
    {
        if (!IsValidUtf8(value))
        {
            return false;
        }
        Uint(static_cast<uint64_t>(value.size()));
        m_out.insert(m_out.end(), value.begin(), value.end());
        return true;
    }

    template <typename E>
    void Enum(E value)
    {
        Uint(static_cast<uint32_t>(value));
    }

  private:
    std::vector<uint8_t>& m_out;
};

/// Thrown inside the payload decoder only; DecodePayload turns it into a WireError.
struct PayloadFailure
{
    WireErrorClass errorClass;
    std::string reason;
};

/// Reads little-endian values from a payload, checking the length before every read.
class Reader
{
  public:
    Reader(const uint8_t* data, std::size_t size)
        : m_data(data),
          m_size(size)
    {
    }

    template <typename T>
    T Uint()
    {
        Need(sizeof(T));
        T value = 0;
        for (std::size_t i = 0; i < sizeof(T); ++i)
        {
            value |= static_cast<T>(static_cast<T>(m_data[m_pos + i]) << (8 * i));
        }
        m_pos += sizeof(T);
        return value;
    }

    bool Bool()
    {
        const std::size_t at = m_pos;
        const uint8_t b = Uint<uint8_t>();
        if (b > 1)
        {
            Malformed("invalid bool value " + std::to_string(b) + " at offset " +
                      std::to_string(at));
        }
        return b == 1;
    }

    double F64()
    {
        const uint64_t bits = Uint<uint64_t>();
        double value;
        std::memcpy(&value, &bits, sizeof(value));
        return value;
    }

    std::string String()
    {
        const std::size_t at = m_pos;
        const uint64_t length = Uint<uint64_t>();
        Need(length);
        std::string value(reinterpret_cast<const char*>(m_data + m_pos),
                          static_cast<std::size_t>(length));
        m_pos += static_cast<std::size_t>(length);
        if (!IsValidUtf8(value))
        {
            Malformed("string at offset " + std::to_string(at) + " is not valid UTF-8");
        }
        return value;
    }

    /// A fieldless enum with variants 0..count-1.
    template <typename E>
    E Enum(uint32_t count, const char* name)
    {
        const std::size_t at = m_pos;
        const uint32_t index = Uint<uint32_t>();
        if (index >= count)
        {
            Malformed("invalid " + std::string(name) + " variant index " + std::to_string(index) +
                      " at offset " + std::to_string(at) + ", expected 0 <= i < " +
                      std::to_string(count));
        }
        return static_cast<E>(index);
    }

    /// A Vec<T>: u64 count, then the elements, each read by readOne.
    template <typename T, typename F>
    std::vector<T> Vec(F readOne)
    {
        const uint64_t count = Uint<uint64_t>();
        std::vector<T> out;
        // Every element takes at least one byte: never reserve more than could be there.
        out.reserve(static_cast<std::size_t>(std::min<uint64_t>(count, Remaining())));
        for (uint64_t i = 0; i < count; ++i)
        {
            out.push_back(readOne(*this));
        }
        return out;
    }

    std::size_t Position() const
    {
        return m_pos;
    }

    std::size_t Remaining() const
    {
        return m_size - m_pos;
    }

  private:
    void Need(uint64_t n) const
    {
        if (n > Remaining())
        {
            throw PayloadFailure{WireErrorClass::TruncatedPayload, ""};
        }
    }

    [[noreturn]] void Malformed(const std::string& reason) const
    {
        throw PayloadFailure{WireErrorClass::MalformedPayload, reason};
    }

    const uint8_t* m_data;
    std::size_t m_size;
    std::size_t m_pos = 0;
};

// --- per-message layouts, in Rust declaration order ---

bool
Write(Writer& w, const Hello& m)
{
    w.Uint(m.protocolVersion);
    return w.String(m.software);
}

bool
Write(Writer& w, const Configure& m)
{
    w.Uint(static_cast<uint64_t>(m.flows.size()));
    for (const auto& f : m.flows)
    {
        w.Uint(f.flow);
        w.Uint(f.port);
        w.Uint(f.src);
        w.Uint(f.dst);
        w.Enum(f.transport);
        w.Bool(f.stopOnDelivery);
    }
    return true;
}

bool
Write(Writer& w, const Configured& m)
{
    w.Uint(m.nodeCount);
    return w.String(m.description);
}

bool
Write(Writer& w, const Step& m)
{
    w.Uint(m.until);
    w.Bool(m.stopAtDelivery);
    w.Uint(static_cast<uint64_t>(m.sends.size()));
    for (const auto& s : m.sends)
    {
        w.Uint(s.flow);
        w.Uint(s.number);
        w.Uint(s.stateIndex);
        w.Uint(s.stateCount);
        w.Uint(s.time);
        w.Uint(s.size);
    }
    w.Uint(static_cast<uint64_t>(m.kinematics.size()));
    for (const auto& k : m.kinematics)
    {
        w.Uint(k.node);
        for (double v : k.position)
        {
            w.F64(v);
        }
        for (double v : k.velocity)
        {
            w.F64(v);
        }
    }
    return true;
}

bool
Write(Writer& w, const StepDone& m)
{
    w.Uint(m.reached);
    w.Uint(static_cast<uint64_t>(m.deliveries.size()));
    for (const auto& d : m.deliveries)
    {
        w.Uint(d.flow);
        w.Uint(d.number);
        w.Uint(d.stateIndex);
        w.Uint(d.stateCount);
        w.Uint(d.sent);
        w.Uint(d.received);
        w.Uint(d.size);
    }
    w.Uint(static_cast<uint64_t>(m.drops.size()));
    for (const auto& d : m.drops)
    {
        w.Uint(d.flow);
        w.Uint(d.number);
        w.Uint(d.stateIndex);
        w.Uint(d.stateCount);
        w.Uint(d.sent);
        w.Uint(d.time);
        w.Uint(d.node);
        w.Enum(d.reason);
    }
    return true;
}

bool
Write(Writer&, const Finish&)
{
    return true;
}

bool
Write(Writer& w, const Summary& m)
{
    w.Uint(m.reached);
    w.Uint(static_cast<uint64_t>(m.flows.size()));
    for (const auto& f : m.flows)
    {
        w.Uint(f.flow);
        w.Uint(f.sent);
        w.Uint(f.delivered);
        w.Uint(f.dropped);
    }
    return true;
}

bool
Write(Writer& w, const Error& m)
{
    w.Enum(m.code);
    return w.String(m.message);
}

bool
Write(Writer& w, const Rules& m)
{
    w.Uint(static_cast<uint64_t>(m.rules.size()));
    for (const auto& r : m.rules)
    {
        w.Uint(r.triggerFlow);
        w.Uint(r.answerFlow);
        w.Uint(r.delay);
        w.Uint(r.size);
        w.Uint(r.stateCount);
        w.Uint(r.maxDelay);
        w.Bool(r.dropStale);
        w.Uint(r.lastTrigger);
    }
    return true;
}

bool
Write(Writer& w, const RulesInstalled& m)
{
    w.Uint(m.count);
    return true;
}

Message
ReadMessage(MessageKind kind, Reader& r)
{
    switch (kind)
    {
    case MessageKind::Hello: {
        Hello m;
        m.protocolVersion = r.Uint<uint16_t>();
        m.software = r.String();
        return m;
    }
    case MessageKind::Configure: {
        Configure m;
        m.flows = r.Vec<FlowSpec>([](Reader& r) {
            FlowSpec f;
            f.flow = r.Uint<uint32_t>();
            f.port = r.Uint<uint16_t>();
            f.src = r.Uint<uint32_t>();
            f.dst = r.Uint<uint32_t>();
            f.transport = r.Enum<Transport>(2, "Transport");
            f.stopOnDelivery = r.Bool();
            return f;
        });
        return m;
    }
    case MessageKind::Configured: {
        Configured m;
        m.nodeCount = r.Uint<uint32_t>();
        m.description = r.String();
        return m;
    }
    case MessageKind::Step: {
        Step m;
        m.until = r.Uint<uint64_t>();
        m.stopAtDelivery = r.Bool();
        m.sends = r.Vec<SendRequest>([](Reader& r) {
            SendRequest s;
            s.flow = r.Uint<uint32_t>();
            s.number = r.Uint<uint64_t>();
            s.stateIndex = r.Uint<uint16_t>();
            s.stateCount = r.Uint<uint16_t>();
            s.time = r.Uint<uint64_t>();
            s.size = r.Uint<uint32_t>();
            return s;
        });
        m.kinematics = r.Vec<NodeKinematics>([](Reader& r) {
            NodeKinematics k;
            k.node = r.Uint<uint32_t>();
            for (double& v : k.position)
            {
                v = r.F64();
            }
            for (double& v : k.velocity)
            {
                v = r.F64();
            }
            return k;
        });
        return m;
    }
    case MessageKind::StepDone: {
        StepDone m;
        m.reached = r.Uint<uint64_t>();
        m.deliveries = r.Vec<Delivery>([](Reader& r) {
            Delivery d;
            d.flow = r.Uint<uint32_t>();
            d.number = r.Uint<uint64_t>();
            d.stateIndex = r.Uint<uint16_t>();
            d.stateCount = r.Uint<uint16_t>();
            d.sent = r.Uint<uint64_t>();
            d.received = r.Uint<uint64_t>();
            d.size = r.Uint<uint32_t>();
            return d;
        });
        m.drops = r.Vec<DropEvent>([](Reader& r) {
            DropEvent d;
            d.flow = r.Uint<uint32_t>();
            d.number = r.Uint<uint64_t>();
            d.stateIndex = r.Uint<uint16_t>();
            d.stateCount = r.Uint<uint16_t>();
            d.sent = r.Uint<uint64_t>();
            d.time = r.Uint<uint64_t>();
            d.node = r.Uint<uint32_t>();
            d.reason = r.Enum<DropReason>(5, "DropReason");
            return d;
        });
        return m;
    }
    case MessageKind::Finish:
        return Finish{};
    case MessageKind::Summary: {
        Summary m;
        m.reached = r.Uint<uint64_t>();
        m.flows = r.Vec<FlowCounters>([](Reader& r) {
            FlowCounters f;
            f.flow = r.Uint<uint32_t>();
            f.sent = r.Uint<uint64_t>();
            f.delivered = r.Uint<uint64_t>();
            f.dropped = r.Uint<uint64_t>();
            return f;
        });
        return m;
    }
    case MessageKind::Error: {
        Error m;
        m.code = r.Enum<ErrorCode>(6, "ErrorCode");
        m.message = r.String();
        return m;
    }
    case MessageKind::Rules: {
        Rules m;
        m.rules = r.Vec<AnswerRule>([](Reader& r) {
            AnswerRule a;
            a.triggerFlow = r.Uint<uint32_t>();
            a.answerFlow = r.Uint<uint32_t>();
            a.delay = r.Uint<uint64_t>();
            a.size = r.Uint<uint32_t>();
            a.stateCount = r.Uint<uint16_t>();
            a.maxDelay = r.Uint<uint64_t>();
            a.dropStale = r.Bool();
            a.lastTrigger = r.Uint<uint64_t>();
            return a;
        });
        return m;
    }
    case MessageKind::RulesInstalled: {
        RulesInstalled m;
        m.count = r.Uint<uint32_t>();
        return m;
    }
    }
    // KindFromWire only produces the kinds above.
    throw PayloadFailure{WireErrorClass::MalformedPayload, "unknown kind"};
}

WireError
MakeError(WireErrorClass errorClass, const std::string& message)
{
    WireError e;
    e.errorClass = errorClass;
    e.message = message;
    return e;
}

std::string
HexBytes(const uint8_t* data, std::size_t size)
{
    static const char* digits = "0123456789abcdef";
    std::string out = "[";
    for (std::size_t i = 0; i < size; ++i)
    {
        if (i > 0)
        {
            out += ", ";
        }
        out += digits[data[i] >> 4];
        out += digits[data[i] & 0xF];
    }
    return out + "]";
}

} // namespace

std::optional<WireError>
DecodeHeader(const uint8_t* data,
             std::size_t size,
             uint32_t maxPayload,
             std::optional<FrameHeader>* header)
{
    header->reset();
    maxPayload = std::min(maxPayload, kMaxPayload);
    const std::size_t magicSeen = std::min<std::size_t>(size, kMagic.size());
    // memcmp with a null pointer is undefined even for 0 bytes, and an empty
    // FrameReader's buffer is null (found by wire_decoder_fuzz under UBSan).
    if (magicSeen > 0 && std::memcmp(data, kMagic.data(), magicSeen) != 0)
    {
        return MakeError(WireErrorClass::BadMagic,
                         "bad magic " + HexBytes(data, magicSeen) +
                             ": the peer is not speaking the netloop protocol (expected \"NTLP\")");
    }
    if (size < 6)
    {
        return std::nullopt;
    }
    const uint16_t version = static_cast<uint16_t>(data[4] | (data[5] << 8));
    if (version != kProtocolVersion)
    {
        WireError e =
            MakeError(WireErrorClass::UnsupportedVersion,
                      "unsupported protocol version " + std::to_string(version) +
                          "; this side speaks version " + std::to_string(kProtocolVersion));
        e.foundVersion = version;
        return e;
    }
    if (size < 8)
    {
        return std::nullopt;
    }
    const uint16_t rawKind = static_cast<uint16_t>(data[6] | (data[7] << 8));
    const std::optional<MessageKind> kind = KindFromWire(rawKind);
    if (!kind)
    {
        return MakeError(WireErrorClass::UnknownKind,
                         "unknown message kind " + std::to_string(rawKind));
    }
    if (size < kHeaderLength)
    {
        return std::nullopt;
    }
    const uint32_t length = static_cast<uint32_t>(data[8]) | (static_cast<uint32_t>(data[9]) << 8) |
                            (static_cast<uint32_t>(data[10]) << 16) |
                            (static_cast<uint32_t>(data[11]) << 24);
    if (length > maxPayload)
    {
        return MakeError(WireErrorClass::Oversized,
                         std::string(ToString(*kind)) + " frame of " + std::to_string(length) +
                             " bytes exceeds the limit of " + std::to_string(maxPayload) +
                             " bytes");
    }
    *header = FrameHeader{*kind, length};
    return std::nullopt;
}

std::variant<Message, WireError>
DecodePayload(const FrameHeader& header, const uint8_t* payload, std::size_t size)
{
    const std::string kind = ToString(header.kind);
    Reader reader(payload, size);
    try
    {
        Message message = ReadMessage(header.kind, reader);
        if (reader.Remaining() > 0)
        {
            return MakeError(WireErrorClass::TrailingBytes,
                             kind + " payload of " + std::to_string(size) + " bytes has " +
                                 std::to_string(reader.Remaining()) +
                                 " trailing bytes after the message");
        }
        return message;
    }
    catch (const PayloadFailure& failure)
    {
        if (failure.errorClass == WireErrorClass::TruncatedPayload)
        {
            return MakeError(WireErrorClass::TruncatedPayload,
                             kind + " payload of " + std::to_string(size) +
                                 " bytes ends before the message is complete");
        }
        return MakeError(failure.errorClass, kind + " payload does not decode: " + failure.reason);
    }
}

DecodeResult
Decode(const uint8_t* data, std::size_t size, uint32_t maxPayload)
{
    DecodeResult result;
    std::optional<FrameHeader> header;
    if (auto error = DecodeHeader(data, size, maxPayload, &header))
    {
        result.status = DecodeResult::Status::Error;
        result.error = *error;
        return result;
    }
    if (!header)
    {
        result.status = DecodeResult::Status::Incomplete;
        result.needed = kHeaderLength;
        return result;
    }
    const std::size_t total = kHeaderLength + header->length;
    if (size < total)
    {
        result.status = DecodeResult::Status::Incomplete;
        result.needed = total;
        return result;
    }
    auto decoded = DecodePayload(*header, data + kHeaderLength, header->length);
    if (auto* error = std::get_if<WireError>(&decoded))
    {
        result.status = DecodeResult::Status::Error;
        result.error = *error;
        return result;
    }
    result.status = DecodeResult::Status::Frame;
    result.message = std::move(std::get<Message>(decoded));
    result.consumed = total;
    return result;
}

bool
EncodeInto(const Message& message,
           std::vector<uint8_t>& out,
           uint32_t maxPayload,
           std::string* error)
{
    maxPayload = std::min(maxPayload, kMaxPayload);
    const std::size_t start = out.size();
    const MessageKind kind = KindOf(message);
    Writer w(out);
    out.insert(out.end(), kMagic.begin(), kMagic.end());
    w.Uint(kProtocolVersion);
    w.Uint(static_cast<uint16_t>(kind));
    w.Uint(static_cast<uint32_t>(0)); // length, patched below
    const bool written = std::visit([&w](const auto& m) { return Write(w, m); }, message);
    if (!written)
    {
        out.resize(start);
        if (error)
        {
            *error = std::string(ToString(kind)) + " message does not encode: a string is not "
                                                   "valid UTF-8";
        }
        return false;
    }
    const std::size_t length = out.size() - start - kHeaderLength;
    if (length > maxPayload)
    {
        out.resize(start);
        if (error)
        {
            *error = std::string(ToString(kind)) + " message of " + std::to_string(length) +
                     " bytes exceeds the frame limit of " + std::to_string(maxPayload) + " bytes";
        }
        return false;
    }
    for (std::size_t i = 0; i < 4; ++i)
    {
        out[start + 8 + i] = static_cast<uint8_t>(length >> (8 * i));
    }
    return true;
}

std::vector<uint8_t>
Encode(const Message& message)
{
    std::vector<uint8_t> out;
    std::string error;
    if (!EncodeInto(message, out, kMaxPayload, &error))
    {
        throw std::invalid_argument(error);
    }
    return out;
}

FrameReader::FrameReader(uint32_t maxPayload)
    : m_maxPayload(std::min(maxPayload, kMaxPayload))
{
}

void
FrameReader::Append(const uint8_t* data, std::size_t size)
{
    // Compact lazily: only when the consumed prefix dominates the buffer.
    if (m_start > 0 && m_start >= m_data.size() / 2)
    {
        m_data.erase(m_data.begin(), m_data.begin() + static_cast<std::ptrdiff_t>(m_start));
        m_start = 0;
    }
    m_data.insert(m_data.end(), data, data + size);
}

DecodeResult
FrameReader::Next()
{
    DecodeResult result = Decode(m_data.data() + m_start, m_data.size() - m_start, m_maxPayload);
    if (result.status == DecodeResult::Status::Frame)
    {
        m_start += result.consumed;
    }
    return result;
}

std::size_t
FrameReader::Buffered() const
{
    return m_data.size() - m_start;
}

std::string
FormatTime(uint64_t ns)
{
    if (ns == 0)
    {
        return "0s";
    }
    const std::pair<const char*, uint64_t> units[] = {{"s", 1000000000ULL},
                                                      {"ms", 1000000ULL},
                                                      {"us", 1000ULL}};
    for (const auto& [unit, scale] : units)
    {
        if (ns % scale == 0)
        {
            return std::to_string(ns / scale) + unit;
        }
    }
    return std::to_string(ns) + "ns";
}

bool
ParseDuration(const std::string& text, uint64_t* ns, std::string* error)
{
    auto fail = [&](const std::string& why) {
        if (error)
        {
            *error = why;
        }
        return false;
    };
    const std::string quoted = "\"" + text + "\"";
    const char* space = " \t\n\r\f\v";
    const std::size_t first = text.find_first_not_of(space);
    if (first == std::string::npos)
    {
        return fail("empty duration; expected a number and a unit, e.g. \"10ms\"");
    }
    const std::string s = text.substr(first, text.find_last_not_of(space) - first + 1);
    if (s == "0")
    {
        *ns = 0;
        return true;
    }
    // Longest suffix first, so that "ms" is not read as "m" + "s" (same table as time.rs).
    const std::pair<const char*, uint64_t> units[] = {{"min", 60000000000ULL},
                                                      {"ns", 1ULL},
                                                      {"us", 1000ULL},
                                                      {"\xC2\xB5s", 1000ULL},
                                                      {"ms", 1000000ULL},
                                                      {"s", 1000000000ULL},
                                                      {"h", 3600000000000ULL}};
    std::string number;
    uint64_t scale = 0;
    for (const auto& [unit, unitScale] : units)
    {
        const std::size_t len = std::strlen(unit);
        if (s.size() >= len && s.compare(s.size() - len, len, unit) == 0)
        {
            number = s.substr(0, s.size() - len);
            number.erase(number.find_last_not_of(space) + 1);
            scale = unitScale;
            break;
        }
    }
    auto isDigits = [](const std::string& p) {
        return p.find_first_not_of("0123456789") == std::string::npos;
    };
    if (scale == 0)
    {
        if (s.find_first_not_of("0123456789.") == std::string::npos)
        {
            return fail("missing unit in " + quoted +
                        "; expected one of ns, us, ms, s, min, h (e.g. \"10ms\")");
        }
        return fail(quoted +
                    " is not a non-negative decimal number followed by a unit (ns, us, ms, s, "
                    "min, h)");
    }
    const std::size_t dot = number.find('.');
    const std::string whole = number.substr(0, dot);
    std::string frac = dot == std::string::npos ? "" : number.substr(dot + 1);
    if ((whole.empty() && frac.empty()) || !isDigits(whole) || !isDigits(frac))
    {
        return fail(quoted +
                    " is not a non-negative decimal number followed by a unit (ns, us, ms, s, "
                    "min, h)");
    }
    const std::string overflow = quoted + " is too long to represent in nanoseconds";
    const std::string subNs = quoted + " is not a whole number of nanoseconds";
    constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
    uint64_t wholeValue = 0;
    for (char c : whole)
    {
        const uint64_t digit = static_cast<uint64_t>(c - '0');
        if (wholeValue > (kMax - digit) / 10)
        {
            return fail(overflow);
        }
        wholeValue = wholeValue * 10 + digit;
    }
    if (wholeValue != 0 && wholeValue > kMax / scale)
    {
        return fail(overflow);
    }
    const uint64_t wholeNs = wholeValue * scale;
    frac.erase(frac.find_last_not_of('0') + 1);
    // scale <= 3.6e12 has at most 13 digits: a fraction longer than that cannot be whole ns,
    // and below it frac * scale fits comfortably in 128 bits.
    uint64_t fracNs = 0;
    if (!frac.empty())
    {
        if (frac.size() > 18)
        {
            return fail(subNs);
        }
        __extension__ typedef unsigned __int128 Uint128;
        Uint128 numerator = 0;
        Uint128 denominator = 1;
        for (char c : frac)
        {
            numerator = numerator * 10 + static_cast<unsigned>(c - '0');
            denominator *= 10;
        }
        numerator *= scale;
        if (numerator % denominator != 0)
        {
            return fail(subNs);
        }
        fracNs = static_cast<uint64_t>(numerator / denominator);
    }
    if (wholeNs > kMax - fracNs)
    {
        return fail(overflow);
    }
    *ns = wholeNs + fracNs;
    return true;
}

} // namespace wire
} // namespace netloop
