#include "common/cli_lists.hpp"

#include <charconv>

namespace fl::common {

namespace {
template <class F>
bool for_each_item(std::string_view text, F&& f) {
  if (text.empty()) return false;
  while (true) {
    auto const comma = text.find(',');
    if (!f(text.substr(0, comma))) return false;
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}
}  // namespace

std::optional<std::vector<int>> parse_positive_int_list(std::string_view text) {
  std::vector<int> out;
  bool const ok = for_each_item(text, [&](std::string_view item) {
    int value = 0;
    auto const [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc{} || end != item.data() + item.size() || value <= 0) return false;
    out.push_back(value);
    return true;
  });
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::vector<std::string>> parse_word_list(std::string_view text) {
  std::vector<std::string> out;
  bool const ok = for_each_item(text, [&](std::string_view item) {
    if (item.empty()) return false;
    out.emplace_back(item);
    return true;
  });
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace fl::common
