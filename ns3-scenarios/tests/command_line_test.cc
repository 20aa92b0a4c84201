/*
 * CheckedCommandLine: every argument ns-3's CommandLine would refuse (and
 * print its help, exit 1) or abort on, or silently misread, comes back as a
 * problem naming the argument; good arguments reach ns-3 and set their
 * variables.
 */
#include "checked-command-line.h"

#include "ns3/core-module.h"
#include "ns3/point-to-point-module.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace netloop;

namespace
{

/// A command line with one argument of each type netloop-server uses.
struct Arguments
{
    uint32_t count = 2;
    uint64_t run = 1;
    int32_t fd = -1;
    double power = 16.0;
    bool flag = false;
    std::string name = "p2p";
    ns3::Time delay = ns3::MilliSeconds(2);
    CheckedCommandLine cmd;

    Arguments()
    {
        cmd.AddValue("count", "an unsigned count", count);
        cmd.AddValue("run", "a 64-bit run", run);
        cmd.AddValue("fd", "a signed descriptor", fd);
        cmd.AddValue("power", "a real", power);
        cmd.AddValue("flag", "a boolean", flag);
        cmd.AddValue("name", "text", name);
        cmd.AddValue("delay", "an ns-3 Time", delay);
    }

    std::optional<ArgumentProblem> Check(const std::string& argument) const
    {
        return cmd.Check({"test", argument});
    }

    /// Checks `text`, which must be a problem naming `argument`; its message
    /// ("" when there is no problem, which fails the test).
    std::string ProblemNaming(const std::string& text, const std::string& argument) const
    {
        const auto problem = Check(text);
        EXPECT_TRUE(problem) << text;
        if (!problem)
        {
            return "";
        }
        EXPECT_EQ(problem->argument, argument) << text;
        return problem->message;
    }
};

} // namespace

TEST(CheckedCommandLine, GoodArgumentsAreParsedIntoTheirVariables)
{
    Arguments a;
    const auto problem = a.cmd.Parse({"test",
                                      "--count=7",
                                      "--run=18446744073709551615",
                                      "--fd=-1",
                                      "--power=-3.5e1",
                                      "--flag",
                                      "--name=lte",
                                      "--delay=5ms"});
    ASSERT_FALSE(problem) << problem->message;
    EXPECT_EQ(a.count, 7u);
    EXPECT_EQ(a.run, 18446744073709551615ull);
    EXPECT_EQ(a.fd, -1);
    EXPECT_EQ(a.power, -35.0);
    EXPECT_TRUE(a.flag); // a bare flag toggles, as in ns-3
    EXPECT_EQ(a.name, "lte");
    EXPECT_EQ(a.delay, ns3::MilliSeconds(5));
    for (const char* flag : {"--flag=true", "--flag=T", "--flag=false", "--flag=0", "--flag=1"})
    {
        EXPECT_FALSE(a.Check(flag)) << flag;
    }
}

TEST(CheckedCommandLine, AValueTheTypeCannotTakeIsAProblemNamingTheArgument)
{
    Arguments a;
    // (argument, the message); ns-3 reads "-1" as 4294967295 and "3abc" as 3.
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--count=abc", "--count=abc is not a whole number from 0 to 4294967295"},
        {"--count=-1", "--count=-1 is not a whole number from 0 to 4294967295"},
        {"--count=3abc", "--count=3abc is not a whole number from 0 to 4294967295"},
        {"--count=4294967296", "--count=4294967296 is not a whole number from 0 to 4294967295"},
        {"--count=", "--count= is not a whole number from 0 to 4294967295"},
        {"--fd=-2147483649",
         "--fd=-2147483649 is not a whole number from -2147483648 to 2147483647"},
        {"--power=nan", "--power=nan is not a number"},
        {"--power=inf", "--power=inf is not a number"},
        {"--power=1e999", "--power=1e999 is not a number"},
        {"--power=20dBm", "--power=20dBm is not a number"},
        {"--flag=maybe", "--flag=maybe is not true or false"},
        {"--delay=2parsecs", "--delay=2parsecs is not a time with unit (e.g. 2ms)"},
    };
    for (const auto& [argument, message] : cases)
    {
        EXPECT_EQ(a.ProblemNaming(argument, argument.substr(2, argument.find('=') - 2)), message);
    }
}

TEST(CheckedCommandLine, AnUnknownArgumentOrANonOptionIsAProblem)
{
    Arguments a;
    EXPECT_EQ(a.ProblemNaming("--bogus=1", "bogus"),
              "--bogus=1: no such argument, ns-3 attribute or global value");
    a.ProblemNaming("-bogus", "bogus");
    a.ProblemNaming("--ns3::NoSuchType::Delay=2ms", "ns3::NoSuchType::Delay");
    a.ProblemNaming("--ns3::PointToPointChannel::NoSuchAttribute=1",
                    "ns3::PointToPointChannel::NoSuchAttribute");
    // ns-3 keeps a stray word as an extra non-option; no netloop program wants one.
    EXPECT_EQ(a.ProblemNaming("count=3", "count"),
              "count=3 is not an argument: write --name=value");
}

TEST(CheckedCommandLine, Ns3AttributesAndGlobalValuesAreCheckedByTheirOwnCheckers)
{
    Arguments a;
    EXPECT_FALSE(a.Check("--ns3::PointToPointChannel::Delay=3ms"));
    EXPECT_FALSE(a.Check("--ns3::PointToPointNetDevice::Mtu=1400"));
    EXPECT_FALSE(a.Check("--RngRun=3"));
    // ns-3 aborts the process on a Time with an unknown unit.
    auto message = a.ProblemNaming("--ns3::PointToPointChannel::Delay=2parsecs",
                                   "ns3::PointToPointChannel::Delay");
    EXPECT_EQ(message.rfind("--ns3::PointToPointChannel::Delay=2parsecs is not a value "
                            "of the ns-3 attribute ns3::PointToPointChannel::Delay (",
                            0),
              0u)
        << message;
    a.ProblemNaming("--ns3::PointToPointNetDevice::Mtu=big", "ns3::PointToPointNetDevice::Mtu");
    a.ProblemNaming("--ns3::PointToPointNetDevice::DataRate=fast",
                    "ns3::PointToPointNetDevice::DataRate");
    message = a.ProblemNaming("--RngRun=many", "RngRun");
    EXPECT_EQ(message.rfind("--RngRun=many is not a value of the ns-3 global value RngRun", 0), 0u)
        << message;
    // Nothing is set by a check; Parse sets what it was given.
    ns3::TimeValue delay;
    ASSERT_TRUE(a.cmd.Parse({"test", "--ns3::PointToPointChannel::Delay=7ms"}) == std::nullopt);
    ns3::TypeId::LookupByName("ns3::PointToPointChannel");
    ns3::Ptr<ns3::PointToPointChannel> channel = ns3::CreateObject<ns3::PointToPointChannel>();
    channel->GetAttribute("Delay", delay);
    EXPECT_EQ(delay.Get(), ns3::MilliSeconds(7));
    ns3::Config::Reset();
}

TEST(CheckedCommandLine, TheFirstBadArgumentIsTheOneNamedAndNothingIsParsed)
{
    Arguments a;
    const auto problem = a.cmd.Parse({"test", "--count=5", "--power=loud", "--bogus"});
    ASSERT_TRUE(problem);
    EXPECT_EQ(problem->argument, "power");
    EXPECT_EQ(a.count, 2u) << "nothing is parsed when an argument is bad";
}

TEST(CheckedCommandLine, Ns3TimeTextIsWhatTimesConstructorReads)
{
    for (const char* good : {"2ms", "1.5s", "3", "1e-3s", "5min", "2h", "1d", "1y", "7fs"})
    {
        EXPECT_TRUE(IsNs3TimeText(good)) << good;
    }
    for (const char* bad : {"", "ms", "2parsecs", "2 ms", "1e", "--2ms", "2mS"})
    {
        EXPECT_FALSE(IsNs3TimeText(bad)) << bad;
    }
}
