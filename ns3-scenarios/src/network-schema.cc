#include "network-schema.h"

#include "checked-command-line.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace netloop
{

namespace
{

std::string
Number(double x)
{
    std::ostringstream os;
    os << std::setprecision(15) << x;
    return os.str();
}

const char*
TypeName(ArgumentType type)
{
    switch (type)
    {
    case ArgumentType::Integer:
        return "integer";
    case ArgumentType::Real:
        return "real";
    case ArgumentType::Boolean:
        return "boolean";
    case ArgumentType::Text:
        return "text";
    case ArgumentType::Choice:
        return "choice";
    case ArgumentType::DataRate:
        return "data_rate";
    case ArgumentType::Duration:
        return "duration";
    case ArgumentType::Positions:
        return "positions";
    case ArgumentType::NodeList:
        return "node_list";
    case ArgumentType::Path:
        return "path";
    case ArgumentType::TraceFile:
        return "trace_file";
    }
    return "text";
}

} // namespace

std::string
JsonQuote(const std::string& text)
{
    std::ostringstream os;
    os << '"';
    for (unsigned char c : text)
    {
        switch (c)
        {
        case '"':
            os << "\\\"";
            break;
        case '\\':
            os << "\\\\";
            break;
        case '\n':
            os << "\\n";
            break;
        case '\t':
            os << "\\t";
            break;
        default:
            if (c < 0x20)
            {
                os << "\\u" << std::hex << std::setw(4) << std::setfill('0') << int(c) << std::dec;
            }
            else
            {
                os << c;
            }
        }
    }
    os << '"';
    return os.str();
}

ArgumentProblem
ArgumentProblem::FromMessage(const std::string& message)
{
    ArgumentProblem problem{"", message};
    if (message.rfind("--", 0) == 0)
    {
        const auto end = message.find_first_of("=: ,;", 2);
        problem.argument = message.substr(2, end == std::string::npos ? end : end - 2);
    }
    return problem;
}

ArgumentSpec::ArgumentSpec(std::string name, std::string key, std::string doc, Storage storage)
    : m_name(std::move(name)),
      m_key(std::move(key)),
      m_doc(std::move(doc)),
      m_storage(storage)
{
    m_type = std::visit(
        [](auto* p) {
            using T = std::remove_pointer_t<decltype(p)>;
            if constexpr (std::is_same_v<T, uint32_t>)
            {
                return ArgumentType::Integer;
            }
            else if constexpr (std::is_same_v<T, double>)
            {
                return ArgumentType::Real;
            }
            else if constexpr (std::is_same_v<T, bool>)
            {
                return ArgumentType::Boolean;
            }
            else
            {
                return ArgumentType::Text;
            }
        },
        m_storage);
    m_default = ValueText();
}

ArgumentSpec&
ArgumentSpec::Unit(std::string unit)
{
    m_unit = std::move(unit);
    return *this;
}

ArgumentSpec&
ArgumentSpec::Min(double min)
{
    m_min = min;
    return *this;
}

ArgumentSpec&
ArgumentSpec::Max(double max)
{
    m_max = max;
    return *this;
}

ArgumentSpec&
ArgumentSpec::Above(double bound)
{
    m_above = bound;
    return *this;
}

ArgumentSpec&
ArgumentSpec::Required()
{
    m_required = true;
    return *this;
}

ArgumentSpec&
ArgumentSpec::File(std::string name)
{
    m_file = std::move(name);
    m_type = ArgumentType::TraceFile;
    return *this;
}

ArgumentSpec&
ArgumentSpec::Allowed(std::vector<double> values)
{
    m_allowed = std::move(values);
    return *this;
}

ArgumentSpec&
ArgumentSpec::Choices(std::vector<Choice> choices)
{
    m_choices = std::move(choices);
    m_type = ArgumentType::Choice;
    return *this;
}

ArgumentSpec&
ArgumentSpec::Type(ArgumentType type)
{
    m_type = type;
    return *this;
}

ArgumentSpec&
ArgumentSpec::Unset(std::string meaning)
{
    m_unset = std::move(meaning);
    return *this;
}

ArgumentSpec&
ArgumentSpec::TableDefault(std::string value)
{
    m_tableDefault = std::move(value);
    return *this;
}

std::string
ArgumentSpec::ValueText() const
{
    return std::visit(
        [](auto* p) -> std::string {
            using T = std::remove_pointer_t<decltype(p)>;
            if constexpr (std::is_same_v<T, std::string>)
            {
                return *p;
            }
            else if constexpr (std::is_same_v<T, bool>)
            {
                return *p ? "true" : "false";
            }
            else
            {
                return Number(static_cast<double>(*p));
            }
        },
        m_storage);
}

std::optional<ArgumentProblem>
ArgumentSpec::Check() const
{
    const std::string text = ValueText();
    if (m_unset && text == m_default)
    {
        return std::nullopt;
    }
    const std::string unit = m_unit.empty() ? "" : " " + m_unit;
    const std::string head = "--" + m_name + "=" + text;
    if (!m_choices.empty())
    {
        const bool known = std::any_of(m_choices.begin(), m_choices.end(), [&](const Choice& c) {
            return c.argument == text;
        });
        if (known)
        {
            return std::nullopt;
        }
        std::string list;
        for (std::size_t i = 0; i < m_choices.size(); ++i)
        {
            list += (i == 0                      ? ""
                     : i + 1 == m_choices.size() ? " or "
                                                 : ", ") +
                    m_choices[i].argument;
        }
        return ArgumentProblem{m_name, head + " is not a choice; use " + list};
    }
    const double* real = nullptr;
    double value = 0;
    if (auto* p = std::get_if<uint32_t*>(&m_storage))
    {
        value = **p;
        real = &value;
    }
    else if (auto* p = std::get_if<double*>(&m_storage))
    {
        value = **p;
        real = &value;
    }
    if (!real)
    {
        return std::nullopt;
    }
    if (!m_allowed.empty() &&
        std::find(m_allowed.begin(), m_allowed.end(), value) == m_allowed.end())
    {
        std::string list;
        for (std::size_t i = 0; i < m_allowed.size(); ++i)
        {
            list += (i == 0                      ? ""
                     : i + 1 == m_allowed.size() ? " or "
                                                 : ", ") +
                    Number(m_allowed[i]);
        }
        return ArgumentProblem{m_name, head + " is not allowed; use " + list + unit};
    }
    // A NaN compares false with everything: it is out of any range.
    if (m_min && !(value >= *m_min))
    {
        return ArgumentProblem{m_name, head + " is less than " + Number(*m_min) + unit};
    }
    if (m_max && !(value <= *m_max))
    {
        return ArgumentProblem{m_name, head + " is more than " + Number(*m_max) + unit};
    }
    if (m_above && !(value > *m_above))
    {
        return ArgumentProblem{m_name, head + " is not more than " + Number(*m_above) + unit};
    }
    return std::nullopt;
}

std::string
ArgumentSpec::Help(const std::string& kind) const
{
    std::ostringstream os;
    os << "[" << kind << "] " << m_doc;
    std::vector<std::string> notes;
    if (!m_unit.empty())
    {
        notes.push_back(m_unit);
    }
    if (!m_choices.empty())
    {
        std::string list;
        for (const auto& c : m_choices)
        {
            list += (list.empty() ? "" : ", ") + c.argument;
        }
        notes.push_back("one of " + list);
    }
    if (!m_allowed.empty())
    {
        std::string list;
        for (double v : m_allowed)
        {
            list += (list.empty() ? "" : ", ") + Number(v);
        }
        notes.push_back("one of " + list);
    }
    if (m_min)
    {
        notes.push_back("at least " + Number(*m_min));
    }
    if (m_max)
    {
        notes.push_back("at most " + Number(*m_max));
    }
    if (m_above)
    {
        notes.push_back("more than " + Number(*m_above));
    }
    if (m_unset)
    {
        notes.push_back(m_default + " = " + *m_unset);
    }
    if (m_tableDefault)
    {
        notes.push_back(*m_tableDefault + " when its table is given without it");
    }
    if (!notes.empty())
    {
        os << " (";
        for (std::size_t i = 0; i < notes.size(); ++i)
        {
            os << (i ? "; " : "") << notes[i];
        }
        os << ")";
    }
    return os.str();
}

void
ArgumentSpec::Register(CheckedCommandLine& cmd, const std::string& kind) const
{
    std::visit([&](auto* p) { cmd.AddValue(m_name, Help(kind), *p); }, m_storage);
}

std::string
ArgumentSpec::Json() const
{
    std::ostringstream os;
    os << "{\"name\":" << JsonQuote(m_name) << ",\"key\":" << JsonQuote(m_key)
       << ",\"type\":" << JsonQuote(TypeName(m_type)) << ",\"unit\":" << JsonQuote(m_unit)
       << ",\"default\":" << (m_unset ? "null" : JsonQuote(m_default));
    if (m_unset)
    {
        os << ",\"unset\":" << JsonQuote(*m_unset);
    }
    if (m_tableDefault)
    {
        os << ",\"table_default\":" << JsonQuote(*m_tableDefault);
    }
    if (m_min)
    {
        os << ",\"min\":" << Number(*m_min);
    }
    if (m_max)
    {
        os << ",\"max\":" << Number(*m_max);
    }
    if (m_above)
    {
        os << ",\"above\":" << Number(*m_above);
    }
    if (m_required)
    {
        os << ",\"required\":true";
    }
    if (!m_file.empty())
    {
        os << ",\"file\":" << JsonQuote(m_file);
    }
    if (!m_allowed.empty())
    {
        os << ",\"allowed\":[";
        for (std::size_t i = 0; i < m_allowed.size(); ++i)
        {
            os << (i ? "," : "") << Number(m_allowed[i]);
        }
        os << "]";
    }
    if (!m_choices.empty())
    {
        os << ",\"choices\":[";
        for (std::size_t i = 0; i < m_choices.size(); ++i)
        {
            os << (i ? "," : "") << "{\"value\":" << JsonQuote(m_choices[i].value)
               << ",\"argument\":" << JsonQuote(m_choices[i].argument) << "}";
        }
        os << "]";
    }
    os << ",\"doc\":" << JsonQuote(m_doc) << "}";
    return os.str();
}

void
ArgumentTable::Register(CheckedCommandLine& cmd, const std::string& kind) const
{
    for (const auto& spec : m_specs)
    {
        spec.Register(cmd, kind);
    }
}

std::optional<ArgumentProblem>
ArgumentTable::Check() const
{
    for (const auto& spec : m_specs)
    {
        if (auto problem = spec.Check())
        {
            return problem;
        }
    }
    return std::nullopt;
}

std::string
ArgumentTable::Json() const
{
    std::string out = "[";
    for (std::size_t i = 0; i < m_specs.size(); ++i)
    {
        out += (i ? "," : "") + m_specs[i].Json();
    }
    return out + "]";
}

std::string
KindDescription::Json() const
{
    std::ostringstream os;
    os << "{\"name\":" << JsonQuote(name) << ",\"doc\":" << JsonQuote(doc)
       << ",\"uses_positions\":" << (usesPositions ? "true" : "false") << ",\"node_count\":{"
       << "\"key\":" << JsonQuote(nodes.key) << ",\"argument\":" << JsonQuote(nodes.argument)
       << ",\"extra\":" << nodes.extra << ",\"min\":" << nodes.min << ",\"max\":" << nodes.max
       << ",\"required\":" << (nodes.required ? "true" : "false")
       << ",\"doc\":" << JsonQuote(nodes.doc)
       << "},\"arguments\":" << (arguments ? arguments->Json() : "[]") << ",\"tables\":[";
    for (std::size_t i = 0; i < tables.size(); ++i)
    {
        const TableUse& use = tables[i];
        os << (i ? "," : "") << "{\"name\":" << JsonQuote(use.table);
        if (!use.arguments.empty())
        {
            os << ",\"arguments\":[";
            for (std::size_t j = 0; j < use.arguments.size(); ++j)
            {
                os << (j ? "," : "") << JsonQuote(use.arguments[j]);
            }
            os << "]";
        }
        if (!use.choices.empty())
        {
            os << ",\"choices\":{";
            for (std::size_t j = 0; j < use.choices.size(); ++j)
            {
                os << (j ? "," : "") << JsonQuote(use.choices[j].first) << ":[";
                const auto& values = use.choices[j].second;
                for (std::size_t k = 0; k < values.size(); ++k)
                {
                    os << (k ? "," : "") << JsonQuote(values[k]);
                }
                os << "]";
            }
            os << "}";
        }
        if (!use.note.empty())
        {
            os << ",\"note\":" << JsonQuote(use.note);
        }
        os << "}";
    }
    os << "]}";
    return os.str();
}

std::string
TableDescription::Json() const
{
    std::ostringstream os;
    os << "{\"name\":" << JsonQuote(name) << ",\"doc\":" << JsonQuote(doc)
       << ",\"what\":" << JsonQuote(what)
       << ",\"canonical_defaults\":" << (canonicalDefaults ? "true" : "false")
       << ",\"arguments\":" << (arguments ? arguments->Json() : "[]") << "}";
    return os.str();
}

TableUse
TableUse::Whole(std::string table)
{
    TableUse use;
    use.table = std::move(table);
    return use;
}

bool
TableUse::Takes(const std::string& argument) const
{
    return arguments.empty() ||
           std::find(arguments.begin(), arguments.end(), argument) != arguments.end();
}

const std::vector<std::string>*
TableUse::ChoicesOf(const std::string& argument) const
{
    for (const auto& [name, values] : choices)
    {
        if (name == argument)
        {
            return &values;
        }
    }
    return nullptr;
}

std::optional<ArgumentProblem>
CheckTableUse(const TableDescription& table,
              const std::vector<TableUse>& uses,
              const std::string& kind)
{
    const TableUse* use = nullptr;
    for (const auto& u : uses)
    {
        if (u.table == table.name)
        {
            use = &u;
        }
    }
    for (const auto& spec : table.arguments->GetSpecs())
    {
        const std::string value = spec.ValueText();
        const bool set = value != spec.GetDefault();
        const std::string head = "--" + spec.GetName() + "=" + value;
        if (!use && set)
        {
            return ArgumentProblem{spec.GetName(),
                                   head + ": " + kind + " has no " + table.what + " (" +
                                       table.name + ")"};
        }
        if (use && set && !use->Takes(spec.GetName()))
        {
            return ArgumentProblem{spec.GetName(),
                                   head + ": " + kind + " does not take it" +
                                       (use->note.empty() ? "" : "; " + use->note)};
        }
        if (!use || !set)
        {
            continue;
        }
        if (const auto* values = use->ChoicesOf(spec.GetName());
            values && std::find(values->begin(), values->end(), value) == values->end())
        {
            std::string list;
            for (std::size_t i = 0; i < values->size(); ++i)
            {
                list += (i == 0 ? "" : i + 1 == values->size() ? " or " : ", ") + (*values)[i];
            }
            return ArgumentProblem{spec.GetName(),
                                   head + " is not available for " + kind + "; use " + list};
        }
        if (auto problem = spec.Check())
        {
            return problem;
        }
    }
    return std::nullopt;
}

std::string
DescribeJson(const std::vector<TableDescription>& tables, const std::vector<KindDescription>& kinds)
{
    std::string out = "{\"schema\":" + std::to_string(kSchemaVersion) + ",\"tables\":[";
    for (std::size_t i = 0; i < tables.size(); ++i)
    {
        out += (i ? "," : "") + tables[i].Json();
    }
    out += "],\"kinds\":[";
    for (std::size_t i = 0; i < kinds.size(); ++i)
    {
        out += (i ? "," : "") + kinds[i].Json();
    }
    return out + "]}";
}

} // namespace netloop
