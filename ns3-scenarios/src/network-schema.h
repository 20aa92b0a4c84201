/*
 * The schema of a network kind: every argument declared once, with its type,
 * unit, default, limits and help text, bound to the variable it fills.
 *
 * One declaration serves three readers:
 *   - ns-3's CommandLine (ArgumentTable::Register on a CheckedCommandLine):
 *     --PrintHelp shows the help text with unit, default and limits;
 *   - validation (ArgumentTable::Check): the limits are enforced here, once,
 *     with a problem that names the argument (ArgumentProblem);
 *   - `netloop-server --describe` (DescribeJson): the bridge reads the schema
 *     to check `[network.ns3]` keys, build the command line, map a problem
 *     back to its scenario key and keep docs/scenario.md in step.
 *
 * Each argument also names its scenario key (under [network.ns3]) and, for a
 * choice, each value's spelling in the scenario and on the command line.
 */
#ifndef NETLOOP_NETWORK_SCHEMA_H
#define NETLOOP_NETWORK_SCHEMA_H

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace netloop
{

class CheckedCommandLine;

/// Version of the --describe JSON; the bridge refuses others. 2: the shared
/// tables (radio, placement, background, traces) and which of them each kind
/// takes.
constexpr int kSchemaVersion = 2;

/// The most nodes a network may have (the bridge's MAX_NODES).
constexpr uint32_t kMaxNodes = 65534;

/**
 * A bad argument: the argument's name (without dashes) and a message that
 * starts with it. BadArgument prints both: the message for people, and one
 * JSON line {"argument":...,"message":...} for the bridge.
 */
struct ArgumentProblem
{
    std::string argument; //!< e.g. "queueSize"; "" when no one argument is to blame
    std::string message;  //!< e.g. "--queueSize=0 is less than 1 (packets)"

    /**
     * A message written "--name..." (the builders' convention) with its name
     * taken from the leading "--name"; "" if it has none.
     */
    static ArgumentProblem FromMessage(const std::string& message);
};

/// What an argument's value is, as the bridge must write it.
enum class ArgumentType
{
    Integer,   //!< unsigned integer
    Real,      //!< floating point
    Boolean,   //!< true or false
    Text,      //!< free text
    Choice,    //!< one of the listed choices
    DataRate,  //!< ns-3 DataRate text, e.g. "10Mbps"
    Duration,  //!< a time with unit, e.g. "2ms"
    Positions, //!< "x,y,z;x,y,z;..." in metres
    NodeList,  //!< "all", "none" or "0,1,2"
    Path,      //!< a file; the scenario's is relative to the scenario file
    TraceFile, //!< a file the run writes: on or off in the scenario (see File())
};

/// One value of a choice: as the scenario writes it and as the command line does.
struct Choice
{
    std::string value;    //!< scenario spelling, e.g. "802.11a"
    std::string argument; //!< command-line spelling, e.g. "80211a"
};

/// One argument, declared once.
class ArgumentSpec
{
  public:
    using Storage = std::variant<uint32_t*, double*, bool*, std::string*>;

    ArgumentSpec(std::string name, std::string key, std::string doc, Storage storage);

    /// Unit of the value, e.g. "packets", "dBm", "MHz".
    ArgumentSpec& Unit(std::string unit);
    /// Smallest value allowed (numbers).
    ArgumentSpec& Min(double min);
    /// Largest value allowed (numbers).
    ArgumentSpec& Max(double max);
    /// Values must be more than this (numbers): an exclusive lower bound.
    ArgumentSpec& Above(double bound);
    /// The scenario must write this key when it writes the argument's table.
    ArgumentSpec& Required();
    /**
     * A TraceFile argument: the file's name in the run's trace folder, which
     * the bridge passes when the scenario turns the trace on.
     */
    ArgumentSpec& File(std::string name);
    /// The only values allowed (numbers).
    ArgumentSpec& Allowed(std::vector<double> values);
    /// The only values allowed (text); makes the type Choice.
    ArgumentSpec& Choices(std::vector<Choice> choices);
    /// A text argument of a richer type (DataRate, Duration, Positions, NodeList).
    ArgumentSpec& Type(ArgumentType type);
    /**
     * The value the variable holds by default means "not set" (e.g. 0 MHz =
     * the standard's width); `meaning` says what the server does then.
     */
    ArgumentSpec& Unset(std::string meaning);
    /**
     * The value the bridge passes when the scenario writes the argument's
     * table (e.g. `bsm = { rate = 5.0 }` for "bsm.nodes") but not its key:
     * writing the table turns the feature on. Only for dotted keys.
     */
    ArgumentSpec& TableDefault(std::string value);

    /// \return the problem with the current value, if any
    std::optional<ArgumentProblem> Check() const;
    /// \return the current value as the command line writes it
    std::string ValueText() const;
    /// \return the help text for --PrintHelp
    std::string Help(const std::string& kind) const;
    /// \return the JSON object of --describe
    std::string Json() const;
    /// Registers the argument on the command line.
    void Register(CheckedCommandLine& cmd, const std::string& kind) const;

    const std::string& GetName() const
    {
        return m_name;
    }

    /// \return the value at declaration, as the command line writes it
    const std::string& GetDefault() const
    {
        return m_default;
    }

  private:
    std::string m_name;
    std::string m_key;
    std::string m_doc;
    Storage m_storage;
    ArgumentType m_type;
    std::string m_unit;
    std::string m_default; //!< ValueText() at declaration
    std::optional<double> m_min;
    std::optional<double> m_max;
    std::optional<double> m_above; //!< see Above()
    bool m_required = false;       //!< see Required()
    std::string m_file;            //!< see File()
    std::vector<double> m_allowed;
    std::vector<Choice> m_choices;
    std::optional<std::string> m_unset;        //!< what the default ("not set") means
    std::optional<std::string> m_tableDefault; //!< see TableDefault()
};

/// The arguments of one kind, in declaration order.
class ArgumentTable
{
  public:
    /// Declares an argument bound to `variable`; its current value is the default.
    template <typename T>
    ArgumentSpec& Add(const std::string& name,
                      const std::string& key,
                      const std::string& doc,
                      T& variable)
    {
        m_specs.emplace_back(name, key, doc, ArgumentSpec::Storage(&variable));
        return m_specs.back();
    }

    /// Registers every argument on the command line, tagged "[kind]".
    void Register(CheckedCommandLine& cmd, const std::string& kind) const;
    /// \return the first argument whose value breaks its limits
    std::optional<ArgumentProblem> Check() const;
    /// \return the JSON array of --describe
    std::string Json() const;

    const std::vector<ArgumentSpec>& GetSpecs() const
    {
        return m_specs;
    }

  private:
    std::vector<ArgumentSpec> m_specs;
};

/**
 * How a kind's node count is set: by which scenario key (and command-line
 * argument), plus how many nodes the network has besides (LTE: the remote
 * host), and what it is when the scenario does not say.
 */
struct NodeCountRule
{
    std::string key = "nodes";      //!< scenario key under [network.ns3]
    std::string argument = "nodes"; //!< command-line argument
    uint32_t extra = 0;             //!< nodes besides the counted ones
    uint32_t min = 1;               //!< fewest counted nodes
    uint32_t max = kMaxNodes;       //!< most counted nodes
    bool required = false;          //!< else: the highest node a loop uses, plus one
    std::string doc;                //!< what the counted nodes are
};

/**
 * A table of arguments several kinds share, declared once by the server
 * (RadioOptions, PlacementOptions, BackgroundOptions, TraceOptions): the
 * scenario's [network.<name>] table.
 */
struct TableDescription
{
    std::string name; //!< "radio": the scenario table [network.radio]
    std::string doc;  //!< one paragraph
    std::string what; //!< what a kind without it lacks, e.g. "a radio"
    /**
     * Whether the table's canonical form (which the bridge's config hash
     * covers) has every default made explicit, or only the keys written.
     */
    bool canonicalDefaults = true;
    const ArgumentTable* arguments = nullptr;

    /// \return the JSON object of --describe
    std::string Json() const;
};

/**
 * Which shared table a kind takes, and how much of it: the arguments (all
 * when empty) and, for a choice, the values it supports (all when absent).
 * The server refuses an argument of a table a kind does not take, set to
 * other than its default (CheckTableUse), and so does the bridge, from
 * --describe, before a run starts.
 */
struct TableUse
{
    std::string table;                  //!< TableDescription::name
    std::vector<std::string> arguments; //!< argument names; empty: all
    /// Argument name -> the command-line values of its choices this kind supports.
    std::vector<std::pair<std::string, std::vector<std::string>>> choices;
    std::string note; //!< said when the scenario sets an argument the kind does not take

    /// \return the use of all of `table`
    static TableUse Whole(std::string table);
    /// \return whether the kind takes `argument` of this table
    bool Takes(const std::string& argument) const;
    /// \return the supported values of a choice, or nullptr when all are
    const std::vector<std::string>* ChoicesOf(const std::string& argument) const;
};

/// Everything --describe says about one kind.
struct KindDescription
{
    std::string name;          //!< the --network value and the scenario's kind
    std::string doc;           //!< one paragraph
    bool usesPositions = true; //!< whether node positions matter (radio)
    NodeCountRule nodes;       //!< how the node count is set
    const ArgumentTable* arguments = nullptr;
    std::vector<TableUse> tables; //!< the shared tables it takes

    /// \return the JSON object of --describe
    std::string Json() const;
};

/**
 * Checks the parsed arguments of a shared table for one kind: the declared
 * limits of what it takes, and that what it does not take keeps its default.
 * \return the first problem, naming the argument
 */
std::optional<ArgumentProblem> CheckTableUse(const TableDescription& table,
                                             const std::vector<TableUse>& uses,
                                             const std::string& kind);

/// The --describe document: {"schema":2,"tables":[...],"kinds":[...]}.
std::string DescribeJson(const std::vector<TableDescription>& tables,
                         const std::vector<KindDescription>& kinds);

/// \return `text` as a JSON string literal
std::string JsonQuote(const std::string& text);

} // namespace netloop

#endif // NETLOOP_NETWORK_SCHEMA_H
