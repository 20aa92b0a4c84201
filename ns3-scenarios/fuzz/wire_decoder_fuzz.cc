/*
 * libFuzzer target: the server's frame decoder (wire::Decode, FrameReader) on
 * arbitrary bytes. The stream is read in chunks as the server reads its socket;
 * a decoded frame re-encodes to exactly its bytes; Decode on the whole buffer
 * and the FrameReader agree.
 */
#include "wire.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace netloop::wire;

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    if (size == 0)
    {
        return 0;
    }
    const std::size_t chunk = 1 + data[0] % 64;
    const uint8_t* stream = data + 1;
    const std::size_t length = size - 1;

    // Frame by frame over the whole buffer.
    std::vector<std::vector<uint8_t>> frames;
    std::size_t at = 0;
    for (;;)
    {
        DecodeResult r = Decode(stream + at, length - at);
        if (r.status != DecodeResult::Status::Frame)
        {
            break;
        }
        if (r.consumed < kHeaderLength || r.consumed > length - at)
        {
            std::abort();
        }
        std::vector<uint8_t> again;
        std::string error;
        if (!EncodeInto(r.message, again, kMaxPayload, &error) || again.size() != r.consumed ||
            std::memcmp(again.data(), stream + at, r.consumed) != 0)
        {
            std::abort(); // re-encoding changed the frame
        }
        frames.push_back(std::move(again));
        at += r.consumed;
    }

    // The same stream through a FrameReader, in chunks: the same frames.
    FrameReader reader;
    std::size_t fed = 0;
    std::size_t seen = 0;
    for (;;)
    {
        DecodeResult r = reader.Next();
        if (r.status == DecodeResult::Status::Frame)
        {
            std::vector<uint8_t> bytes = Encode(r.message);
            if (seen >= frames.size() || bytes != frames[seen])
            {
                std::abort(); // the reader and Decode disagree
            }
            ++seen;
            continue;
        }
        if (r.status == DecodeResult::Status::Error || fed == length)
        {
            break;
        }
        const std::size_t n = std::min(chunk, length - fed);
        reader.Append(stream + fed, n);
        fed += n;
    }
    if (seen != frames.size())
    {
        std::abort();
    }
    return 0;
}
