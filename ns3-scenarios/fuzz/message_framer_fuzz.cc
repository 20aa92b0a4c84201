/*
 * libFuzzer target: the TCP control flows' message framer (MessageFramer),
 * driven by a fuzzed sequence of writes (Push) and reads (Consume), checked
 * against a plain byte count: every message completes exactly when all of its
 * bytes and those of its predecessors have arrived, in send order.
 */
#include "message-framer.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>

using namespace netloop;

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    MessageFramer framer;
    std::deque<std::pair<uint64_t, uint64_t>> model; // (number, end offset in the stream)
    uint64_t written = 0;
    uint64_t read = 0;
    uint64_t next = 0;
    for (std::size_t i = 0; i + 2 < size; i += 3)
    {
        const uint64_t amount = (uint64_t(data[i + 1]) << 8 | data[i + 2]);
        switch (data[i] % 3)
        {
        case 0: { // a message of 1..65536 bytes is written
            ControlPacket message;
            message.number = next++;
            message.size = static_cast<uint32_t>(amount + 1);
            framer.Push(message);
            written += amount + 1;
            model.emplace_back(message.number, written);
            break;
        }
        case 1: { // bytes are read
            const uint64_t excessBefore = framer.GetExcessBytes();
            const uint64_t useful = std::min(amount, written - read);
            read += useful;
            auto done = framer.Consume(amount);
            for (const auto& m : done)
            {
                if (model.empty() || model.front().first != m.number || model.front().second > read)
                {
                    std::abort(); // out of order, or before its last byte
                }
                model.pop_front();
            }
            if (!model.empty() && model.front().second <= read)
            {
                std::abort(); // complete but not returned
            }
            if (framer.GetExcessBytes() != excessBefore + (amount - useful))
            {
                std::abort();
            }
            break;
        }
        default: { // the stream breaks
            auto pending = framer.TakePending();
            if (pending.size() != model.size())
            {
                std::abort();
            }
            model.clear();
            read = written;
            break;
        }
        }
        if (framer.GetPendingCount() != model.size())
        {
            std::abort();
        }
    }
    return 0;
}
