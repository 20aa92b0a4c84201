/*
 * Helpers shared by the tests that read protocol/golden/.
 */
#ifndef NETLOOP_TESTS_GOLDEN_UTIL_H
#define NETLOOP_TESTS_GOLDEN_UTIL_H

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace netloop
{
namespace test
{

/// The bytes of a lowercase or uppercase hex string; throws on odd length or a bad digit.
inline std::vector<uint8_t>
FromHex(const std::string& hex)
{
    if (hex.size() % 2 != 0)
    {
        throw std::invalid_argument("odd hex length");
    }
    auto digit = [](char c) -> int {
        if (c >= '0' && c <= '9')
        {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f')
        {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F')
        {
            return c - 'A' + 10;
        }
        throw std::invalid_argument(std::string("bad hex digit ") + c);
    };
    std::vector<uint8_t> out;
    for (std::size_t i = 0; i < hex.size(); i += 2)
    {
        out.push_back(static_cast<uint8_t>(digit(hex[i]) * 16 + digit(hex[i + 1])));
    }
    return out;
}

/// Lowercase hex of bytes.
inline std::string
ToHex(const std::vector<uint8_t>& bytes)
{
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (uint8_t b : bytes)
    {
        out += digits[b >> 4];
        out += digits[b & 0xF];
    }
    return out;
}

/// The non-comment, non-empty lines of a golden file, split on whitespace.
/// Throws if the file cannot be read or a line has another number of fields.
inline std::vector<std::vector<std::string>>
ReadTable(const std::string& path, std::size_t fields)
{
    std::ifstream in(path);
    if (!in)
    {
        throw std::runtime_error("cannot read " + path);
    }
    std::vector<std::vector<std::string>> rows;
    std::string line;
    while (std::getline(in, line))
    {
        std::istringstream words(line);
        std::vector<std::string> cols;
        std::string w;
        while (words >> w)
        {
            cols.push_back(w);
        }
        if (cols.empty() || cols[0][0] == '#')
        {
            continue;
        }
        if (cols.size() != fields)
        {
            throw std::runtime_error("malformed golden line: " + line);
        }
        rows.push_back(cols);
    }
    return rows;
}

/// One case of protocol/time/golden/durations.txt.
struct DurationCase
{
    int line;             //!< line number in the file, for messages
    std::string input;    //!< the string to parse, escapes undone
    std::string expected; //!< nanoseconds in decimal, or an error class
};

/// The cases of the duration table: `<input>|<expected>`, split at the last '|';
/// the input's escapes (\\ \t \n \r \v \f \xHH) undone. Throws on a malformed line.
inline std::vector<DurationCase>
ReadDurationTable(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
    {
        throw std::runtime_error("cannot read " + path);
    }
    std::vector<DurationCase> cases;
    std::string line;
    int number = 0;
    while (std::getline(in, line))
    {
        ++number;
        if (line.empty() || line[0] == '#')
        {
            continue;
        }
        const std::size_t bar = line.rfind('|');
        if (bar == std::string::npos)
        {
            throw std::runtime_error("no '|' in line " + std::to_string(number));
        }
        const std::string raw = line.substr(0, bar);
        std::string input;
        for (std::size_t i = 0; i < raw.size(); ++i)
        {
            if (raw[i] != '\\')
            {
                input += raw[i];
                continue;
            }
            if (++i == raw.size())
            {
                throw std::runtime_error("trailing backslash in line " + std::to_string(number));
            }
            switch (raw[i])
            {
            case '\\':
                input += '\\';
                break;
            case 't':
                input += '\t';
                break;
            case 'n':
                input += '\n';
                break;
            case 'r':
                input += '\r';
                break;
            case 'v':
                input += '\v';
                break;
            case 'f':
                input += '\f';
                break;
            case 'x':
                input += static_cast<char>(FromHex(raw.substr(i + 1, 2)).at(0));
                i += 2;
                break;
            default:
                throw std::runtime_error("unknown escape in line " + std::to_string(number));
            }
        }
        cases.push_back({number, input, line.substr(bar + 1)});
    }
    return cases;
}

} // namespace test
} // namespace netloop

#endif // NETLOOP_TESTS_GOLDEN_UTIL_H
