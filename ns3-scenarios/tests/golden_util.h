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

} // namespace test
} // namespace netloop

#endif // NETLOOP_TESTS_GOLDEN_UTIL_H
