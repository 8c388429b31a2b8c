#include "tuner/cli/option_values.hpp"

#include <charconv>

namespace fl::tuner {

std::vector<std::string> split_commas(std::vector<std::string> const& items) {
  std::vector<std::string> out;
  for (auto const& item : items) {
    std::stringstream ss(item);
    for (std::string part; std::getline(ss, part, ',');)
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

void require_one_of(std::string const& value, std::set<std::string> const& allowed,
                    std::string const& option) {
  if (allowed.contains(value)) return;
  std::string list;
  for (auto const& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw UsageError("--" + option + " '" + value + "' is not one of: " + list);
}

int parse_whole_number(std::string const& text, std::string const& option, int min, int max) {
  std::string const range = std::to_string(min) + ".." + std::to_string(max);
  int value = 0;
  auto const* const end = text.data() + text.size();
  auto const [stop, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range && stop == end)  // beyond int: out of range, not "invalid"
    throw UsageError("--" + option + " " + text + " is outside " + range);
  if (text.empty() || ec != std::errc() || stop != end)
    throw UsageError("--" + option + " '" + text + "' is not a whole number (" + range + ")");
  if (value < min || value > max) throw UsageError("--" + option + " " + text + " is outside " + range);
  return value;
}

std::vector<int> parse_int_list(std::string const& text, std::string const& option, int min, int max) {
  std::vector<int> values;
  for (auto const& part : split_commas({text})) values.push_back(parse_whole_number(part, option, min, max));
  if (values.empty()) throw UsageError("--" + option + " needs at least one value");
  return values;
}

}  // namespace fl::tuner
