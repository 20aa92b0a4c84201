#include "radio.h"

#include "ns3/double.h"
#include "ns3/propagation-delay-model.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace netloop
{

namespace
{

constexpr double kSpeedOfLight = 299792458.0;

bool
Positive(double v)
{
    return std::isfinite(v) && v > 0.0;
}

std::string
Number(double v)
{
    std::ostringstream os;
    os << v;
    return os.str();
}

std::string
Rounded(double v)
{
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(2);
    os << v;
    return os.str();
}

} // namespace

const char*
ToString(Propagation propagation)
{
    switch (propagation)
    {
    case Propagation::Friis:
        return "friis";
    case Propagation::LogDistance:
        return "logDistance";
    case Propagation::TwoRayGround:
        return "twoRayGround";
    case Propagation::Nakagami:
        return "nakagami";
    case Propagation::Range:
        return "range";
    }
    return "?";
}

std::optional<Propagation>
ParsePropagation(const std::string& name)
{
    for (Propagation candidate : {Propagation::Friis,
                                  Propagation::LogDistance,
                                  Propagation::TwoRayGround,
                                  Propagation::Nakagami,
                                  Propagation::Range})
    {
        if (name == ToString(candidate))
        {
            return candidate;
        }
    }
    return std::nullopt;
}

void
RadioOptions::DeclareArguments(ArgumentTable& table)
{
    table.Add("txPower", "tx_power", "transmit power of every node", txPower)
        .Unit("dBm")
        .Min(-100)
        .Max(100);
    table
        .Add("propagation",
             "propagation",
             "propagation loss model: nakagami is log-distance path loss, then Nakagami-m "
             "fading; range is full power up to max_range, nothing beyond",
             propagation)
        .Choices({{"friis", "friis"},
                  {"log_distance", "logDistance"},
                  {"two_ray_ground", "twoRayGround"},
                  {"nakagami", "nakagami"},
                  {"range", "range"}})
        .Unset("the kind's: logDistance (lte: friis)");
    table
        .Add("logDistanceExponent",
             "log_distance_exponent",
             "path loss exponent of log_distance and nakagami",
             logDistanceExponent)
        .Above(0);
    table
        .Add("referenceLoss",
             "reference_loss",
             "log_distance and nakagami loss at reference_distance",
             referenceLoss)
        .Type(ArgumentType::Real)
        .Unit("dB")
        .Unset("free-space (Friis) loss at reference_distance for the channel's frequency");
    table
        .Add("referenceDistance",
             "reference_distance",
             "log_distance and nakagami reference distance",
             referenceDistance)
        .Unit("m")
        .Above(0);
    table.Add("nakagamiM0", "nakagami_m[0]", "Nakagami m below nakagami_distances[0]", nakagamiM0)
        .Min(0.5);
    table
        .Add("nakagamiM1",
             "nakagami_m[1]",
             "Nakagami m between nakagami_distances[0] and [1]",
             nakagamiM1)
        .Min(0.5);
    table.Add("nakagamiM2", "nakagami_m[2]", "Nakagami m beyond nakagami_distances[1]", nakagamiM2)
        .Min(0.5);
    table.Add("nakagamiD1", "nakagami_distances[0]", "first Nakagami distance bound", nakagamiD1)
        .Unit("m")
        .Above(0);
    table.Add("nakagamiD2", "nakagami_distances[1]", "second Nakagami distance bound", nakagamiD2)
        .Unit("m")
        .Above(0);
    table.Add("maxRange", "max_range", "range of the range propagation model", maxRange)
        .Unit("m")
        .Above(0);
    table
        .Add("antennaHeight",
             "antenna_height",
             "two_ray_ground: antenna height above each node's z",
             antennaHeight)
        .Unit("m")
        .Min(0);
    table
        .Add("phyMode",
             "phy_mode",
             "data mode of the constant rate manager, an ns-3 WifiMode name (e.g. OfdmRate6Mbps, "
             "HtMcs3, OfdmRate6MbpsBW10MHz)",
             phyMode)
        .Unset("the standard's lowest rate (wave: OfdmRate6MbpsBW10MHz)");
    table.Add("staticArp",
              "static_arp",
              "fill every ARP cache at start (NeighborCacheHelper), so no packet waits for "
              "address resolution; false = dynamic ARP",
              staticArp);
}

void
RadioOptions::AddArguments(CheckedCommandLine& cmd)
{
    ArgumentTable table;
    DeclareArguments(table);
    table.Register(cmd, "radio");
}

std::variant<RadioParameters, std::string>
ParseRadioOptions(const RadioOptions& o,
                  Propagation kindDefault,
                  const std::vector<Propagation>& allowed)
{
    RadioParameters p;
    if (!std::isfinite(o.txPower) || o.txPower < -100.0 || o.txPower > 100.0)
    {
        return "--txPower=" + Number(o.txPower) + " is not a transmit power in dBm (-100..100)";
    }
    p.txPowerDbm = o.txPower;
    p.propagation = kindDefault;
    if (!o.propagation.empty())
    {
        const auto parsed = ParsePropagation(o.propagation);
        const bool found = parsed.has_value();
        if (found)
        {
            p.propagation = *parsed;
        }
        std::string names;
        for (Propagation a : allowed)
        {
            names += (names.empty() ? "" : ", ") + std::string(ToString(a));
        }
        if (!found || std::find(allowed.begin(), allowed.end(), p.propagation) == allowed.end())
        {
            return "--propagation=" + o.propagation + " is not available here; use one of " + names;
        }
    }
    if (!Positive(o.logDistanceExponent))
    {
        return "--logDistanceExponent=" + Number(o.logDistanceExponent) + " must be > 0";
    }
    p.exponent = o.logDistanceExponent;
    if (o.referenceLoss != "auto")
    {
        errno = 0;
        char* end = nullptr;
        const double loss = std::strtod(o.referenceLoss.c_str(), &end);
        if (o.referenceLoss.empty() || errno != 0 ||
            end != o.referenceLoss.c_str() + o.referenceLoss.size() || !std::isfinite(loss))
        {
            return "--referenceLoss=" + o.referenceLoss + " is neither auto nor a number of dB";
        }
        p.referenceLossDb = loss;
    }
    if (!Positive(o.referenceDistance))
    {
        return "--referenceDistance=" + Number(o.referenceDistance) + " must be > 0 m";
    }
    p.referenceDistance = o.referenceDistance;
    const std::pair<const char*, double> ms[] = {{"nakagamiM0", o.nakagamiM0},
                                                 {"nakagamiM1", o.nakagamiM1},
                                                 {"nakagamiM2", o.nakagamiM2}};
    for (const auto& [name, value] : ms)
    {
        if (!(std::isfinite(value) && value >= 0.5))
        {
            return std::string("--") + name + "=" + Number(value) +
                   ": a Nakagami m parameter is at least 0.5";
        }
    }
    p.nakagamiM0 = o.nakagamiM0;
    p.nakagamiM1 = o.nakagamiM1;
    p.nakagamiM2 = o.nakagamiM2;
    if (!Positive(o.nakagamiD1) || !Positive(o.nakagamiD2) || o.nakagamiD2 < o.nakagamiD1)
    {
        return "--nakagamiD1=" + Number(o.nakagamiD1) +
               " and --nakagamiD2=" + Number(o.nakagamiD2) +
               " must be distances with 0 < d1 <= d2 (m)";
    }
    p.nakagamiD1 = o.nakagamiD1;
    p.nakagamiD2 = o.nakagamiD2;
    if (!Positive(o.maxRange))
    {
        return "--maxRange=" + Number(o.maxRange) + " must be > 0 m";
    }
    p.maxRange = o.maxRange;
    if (!(std::isfinite(o.antennaHeight) && o.antennaHeight >= 0.0))
    {
        return "--antennaHeight=" + Number(o.antennaHeight) + " must be >= 0 m";
    }
    p.antennaHeight = o.antennaHeight;
    p.staticArp = o.staticArp;
    return p;
}

double
FriisLossDb(double distanceM, double frequencyHz)
{
    const double lambda = kSpeedOfLight / frequencyHz;
    return 20.0 * std::log10(4.0 * M_PI * distanceM / lambda);
}

PropagationChain::PropagationChain(const RadioParameters& parameters)
    : m_parameters(parameters)
{
    switch (parameters.propagation)
    {
    case Propagation::Friis:
        m_pathLoss = ns3::CreateObject<ns3::FriisPropagationLossModel>();
        break;
    case Propagation::LogDistance:
    case Propagation::Nakagami: {
        auto model = ns3::CreateObject<ns3::LogDistancePropagationLossModel>();
        model->SetAttribute("Exponent", ns3::DoubleValue(parameters.exponent));
        model->SetAttribute("ReferenceDistance", ns3::DoubleValue(parameters.referenceDistance));
        if (parameters.referenceLossDb)
        {
            model->SetAttribute("ReferenceLoss", ns3::DoubleValue(*parameters.referenceLossDb));
        }
        m_pathLoss = model;
        break;
    }
    case Propagation::TwoRayGround: {
        auto model = ns3::CreateObject<ns3::TwoRayGroundPropagationLossModel>();
        model->SetAttribute("HeightAboveZ", ns3::DoubleValue(parameters.antennaHeight));
        m_pathLoss = model;
        break;
    }
    case Propagation::Range: {
        auto model = ns3::CreateObject<ns3::RangePropagationLossModel>();
        model->SetAttribute("MaxRange", ns3::DoubleValue(parameters.maxRange));
        m_pathLoss = model;
        break;
    }
    }
    m_first = m_pathLoss;
    if (parameters.propagation == Propagation::Nakagami)
    {
        auto fading = ns3::CreateObject<ns3::NakagamiPropagationLossModel>();
        fading->SetAttribute("Distance1", ns3::DoubleValue(parameters.nakagamiD1));
        fading->SetAttribute("Distance2", ns3::DoubleValue(parameters.nakagamiD2));
        fading->SetAttribute("m0", ns3::DoubleValue(parameters.nakagamiM0));
        fading->SetAttribute("m1", ns3::DoubleValue(parameters.nakagamiM1));
        fading->SetAttribute("m2", ns3::DoubleValue(parameters.nakagamiM2));
        m_pathLoss->SetNext(fading);
    }
}

ns3::Ptr<ns3::PropagationLossModel>
PropagationChain::GetFirst() const
{
    return m_first;
}

void
PropagationChain::SetFrequency(double frequencyHz)
{
    m_frequencyHz = frequencyHz;
    switch (m_parameters.propagation)
    {
    case Propagation::Friis:
    case Propagation::TwoRayGround:
        m_pathLoss->SetAttribute("Frequency", ns3::DoubleValue(frequencyHz));
        break;
    case Propagation::LogDistance:
    case Propagation::Nakagami:
        if (!m_parameters.referenceLossDb)
        {
            m_pathLoss->SetAttribute(
                "ReferenceLoss",
                ns3::DoubleValue(FriisLossDb(m_parameters.referenceDistance, frequencyHz)));
        }
        break;
    case Propagation::Range:
        break;
    }
}

int64_t
PropagationChain::AssignStreams(int64_t stream)
{
    return m_first->AssignStreams(stream);
}

std::string
PropagationChain::Describe() const
{
    const RadioParameters& p = m_parameters;
    std::ostringstream os;
    os << ToString(p.propagation);
    switch (p.propagation)
    {
    case Propagation::Friis:
        os << " at " << Rounded(m_frequencyHz / 1e9) << " GHz";
        break;
    case Propagation::LogDistance:
    case Propagation::Nakagami: {
        const double loss = p.referenceLossDb ? *p.referenceLossDb
                                              : FriisLossDb(p.referenceDistance, m_frequencyHz);
        os << " (exponent " << p.exponent << ", " << Rounded(loss) << " dB at "
           << p.referenceDistance << " m";
        if (p.propagation == Propagation::Nakagami)
        {
            os << "; Nakagami m " << p.nakagamiM0 << "/" << p.nakagamiM1 << "/" << p.nakagamiM2
               << " at " << p.nakagamiD1 << "/" << p.nakagamiD2 << " m";
        }
        os << ")";
        break;
    }
    case Propagation::TwoRayGround:
        os << " (antennas " << p.antennaHeight << " m, " << Rounded(m_frequencyHz / 1e9) << " GHz)";
        break;
    case Propagation::Range:
        os << " (" << p.maxRange << " m)";
        break;
    }
    return os.str();
}

ns3::Ptr<ns3::YansWifiChannel>
CreateYansChannel(const PropagationChain& chain)
{
    auto channel = ns3::CreateObject<ns3::YansWifiChannel>();
    channel->SetPropagationDelayModel(ns3::CreateObject<ns3::ConstantSpeedPropagationDelayModel>());
    channel->SetPropagationLossModel(chain.GetFirst());
    return channel;
}

} // namespace netloop
