/*
 * Radio settings shared by the Wi-Fi and WAVE builders (tx power, propagation
 * loss model and its parameters, neighbour caches), and the propagation
 * choice of the LTE builder.
 */
#ifndef NETLOOP_RADIO_H
#define NETLOOP_RADIO_H

#include "checked-command-line.h"
#include "network-schema.h"

#include "ns3/propagation-loss-model.h"
#include "ns3/yans-wifi-channel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace netloop
{

/// The propagation loss models on offer.
enum class Propagation
{
    Friis,        //!< FriisPropagationLossModel (free space)
    LogDistance,  //!< LogDistancePropagationLossModel
    TwoRayGround, //!< TwoRayGroundPropagationLossModel
    Nakagami,     //!< log-distance path loss followed by Nakagami-m fading
    Range,        //!< RangePropagationLossModel: full power up to a range, nothing beyond
};

/// Name of a propagation model as typed on the command line ("logDistance", ...).
const char* ToString(Propagation propagation);

/// The model of a command-line name, if it is one.
std::optional<Propagation> ParsePropagation(const std::string& name);

/// Command-line values of the radio, as typed.
struct RadioOptions
{
    double txPower = 16.0206;           //!< dBm (ns-3's WifiPhy default)
    std::string propagation;            //!< empty: the network kind's default
    double logDistanceExponent = 3.0;   //!< path loss exponent
    std::string referenceLoss = "auto"; //!< dB at referenceDistance, or "auto" (Friis)
    double referenceDistance = 1.0;     //!< m
    double nakagamiM0 = 1.5;            //!< m below nakagamiD1
    double nakagamiM1 = 0.75;           //!< m from nakagamiD1 to nakagamiD2
    double nakagamiM2 = 0.75;           //!< m beyond nakagamiD2
    double nakagamiD1 = 80.0;           //!< m
    double nakagamiD2 = 200.0;          //!< m
    double maxRange = 250.0;            //!< m, for the range model
    double antennaHeight = 1.5;         //!< m above each node's z, for two-ray ground
    bool staticArp = true;              //!< pre-fill every ARP cache
    std::string phyMode;                //!< constant-rate data mode; empty: the kind's default

    /// Declares the arguments (--txPower, --propagation, ...): the shared table "radio".
    void DeclareArguments(ArgumentTable& table);
    /// Declares the arguments and registers them on `cmd`.
    void AddArguments(CheckedCommandLine& cmd);
};

/// Validated radio parameters.
struct RadioParameters
{
    double txPowerDbm = 16.0206;
    Propagation propagation = Propagation::LogDistance;
    double exponent = 3.0;
    std::optional<double> referenceLossDb; //!< nullopt: Friis loss at the reference distance
    double referenceDistance = 1.0;
    double nakagamiM0 = 1.5;
    double nakagamiM1 = 0.75;
    double nakagamiM2 = 0.75;
    double nakagamiD1 = 80.0;
    double nakagamiD2 = 200.0;
    double maxRange = 250.0;
    double antennaHeight = 1.5;
    bool staticArp = true;
};

/**
 * Parses and checks the options.
 * \param options the typed values
 * \param kindDefault the model when --propagation is empty
 * \param allowed the models this network kind supports
 * \return the parameters, or a message naming the argument
 */
std::variant<RadioParameters, std::string> ParseRadioOptions(
    const RadioOptions& options,
    Propagation kindDefault,
    const std::vector<Propagation>& allowed);

/// Free-space (Friis) loss in dB at a distance, for a frequency.
double FriisLossDb(double distanceM, double frequencyHz);

/**
 * \brief The propagation loss chain of one channel.
 *
 * Built before the devices (the channel needs it), finished once the devices
 * know their operating frequency: Friis and two-ray ground get that frequency,
 * an "auto" log-distance reference loss the Friis loss at the reference
 * distance for it.
 */
class PropagationChain
{
  public:
    /// Creates the models for the parameters.
    explicit PropagationChain(const RadioParameters& parameters);
    /// \return the first model of the chain
    ns3::Ptr<ns3::PropagationLossModel> GetFirst() const;
    /// Sets the frequency-dependent attributes.
    void SetFrequency(double frequencyHz);
    /// Fixes the random streams of the models (Nakagami); \return streams used
    int64_t AssignStreams(int64_t stream);
    /// One line, e.g. "logDistance (exponent 3, 47.86 dB at 1 m)".
    std::string Describe() const;

  private:
    RadioParameters m_parameters;                   //!< what was asked for
    ns3::Ptr<ns3::PropagationLossModel> m_first;    //!< head of the chain
    ns3::Ptr<ns3::PropagationLossModel> m_pathLoss; //!< the distance-dependent part
    double m_frequencyHz = 0.0;                     //!< set by SetFrequency
};

/**
 * A YansWifiChannel with constant-speed propagation delay and the chain's loss
 * models.
 */
ns3::Ptr<ns3::YansWifiChannel> CreateYansChannel(const PropagationChain& chain);

} // namespace netloop

#endif // NETLOOP_RADIO_H
