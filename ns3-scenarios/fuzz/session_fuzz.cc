/*
 * libFuzzer target: the server's session state machine over a real StepEngine
 * (two ns-3 nodes on a 1 ms point-to-point link), fed a fuzzed byte stream
 * through the FrameReader exactly as StepServer feeds it from its socket, no
 * network I/O. Every reply must encode; the session ends with Finish, an
 * Error reply, or the end of the input, never a crash. The simulator is
 * destroyed and rebuilt for every input.
 */
#include "session.h"
#include "step-engine.h"
#include "wire.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

using namespace netloop;

namespace
{

/// Two nodes, one link, addresses: what the session serves.
ns3::NodeContainer
BuildNodes()
{
    ns3::NodeContainer nodes;
    nodes.Create(2);
    ns3::PointToPointHelper link;
    link.SetDeviceAttribute("DataRate", ns3::StringValue("10Mbps"));
    link.SetChannelAttribute("Delay", ns3::StringValue("1ms"));
    ns3::NetDeviceContainer devices = link.Install(nodes);
    ns3::InternetStackHelper internet;
    internet.Install(nodes);
    ns3::Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.252");
    addresses.Assign(devices);
    return nodes;
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    if (size == 0)
    {
        return 0;
    }
    const std::size_t chunk = 1 + data[0] % 128;
    const uint8_t* stream = data + 1;
    const std::size_t length = size - 1;
    {
        ns3::RngSeedManager::SetSeed(1);
        ns3::RngSeedManager::SetRun(1);
        ns3::NodeContainer nodes = BuildNodes();
        StepEngine engine(nodes, FirstInterfaceAddresses(nodes), "fuzz: p2p of 2 nodes");
        Session session(engine, "netloop-fuzz");
        wire::FrameReader reader;
        std::size_t fed = 0;
        for (;;)
        {
            Session::Reply reply;
            wire::DecodeResult frame = reader.Next();
            if (frame.status == wire::DecodeResult::Status::Incomplete)
            {
                if (fed == length)
                {
                    break; // the bridge went away
                }
                const std::size_t n = std::min(chunk, length - fed);
                reader.Append(stream + fed, n);
                fed += n;
                continue;
            }
            if (frame.status == wire::DecodeResult::Status::Error)
            {
                reply = session.HandleFrameError(frame.error);
            }
            else
            {
                try
                {
                    reply = session.Handle(frame.message);
                }
                catch (const std::exception& e)
                {
                    // StepServer turns these into an Internal error; none is expected.
                    std::abort();
                }
            }
            if (reply.message)
            {
                std::vector<uint8_t> bytes;
                std::string error;
                if (!wire::EncodeInto(*reply.message, bytes, wire::kMaxPayload, &error))
                {
                    std::abort(); // a reply the bridge could not be sent
                }
            }
            if (reply.close)
            {
                break;
            }
        }
    }
    ns3::Simulator::Destroy();
    return 0;
}
