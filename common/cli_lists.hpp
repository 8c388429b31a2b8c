#pragma once
// Command-line list values shared by fa-bench and fa-tune: "64,128" -> {64, 128}.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fl::common {

// Positive integers separated by commas; std::nullopt when an item is empty, not a number or <= 0.
std::optional<std::vector<int>> parse_positive_int_list(std::string_view text);
// Words separated by commas (no empty items).
std::optional<std::vector<std::string>> parse_word_list(std::string_view text);

}  // namespace fl::common
