#pragma once
// A kernel configuration: the value of every tunable of a family, by name ("kBlockM" -> 128). Ordered by
// name, so its text form is canonical: "kBlockM=128,kBlockN=64,..." is what the SQLite store keys on
// (db/README.md) and what fa-bench prints.
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace fl::device {

using Config = std::map<std::string, int, std::less<>>;

// "kBlockM=128,kBlockN=64" (pairs sorted by name, comma-separated, no spaces).
std::string to_string(Config const& config);

// The inverse of to_string; spaces around items are allowed. std::nullopt for a malformed text
// (missing '=', a value that is not an integer, a name given twice).
std::optional<Config> parse_config(std::string_view text);

// The value of `name`, or `fallback` when the config does not set it.
int value_or(Config const& config, std::string_view name, int fallback);

}  // namespace fl::device
