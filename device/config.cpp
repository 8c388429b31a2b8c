#include "device/config.hpp"

#include <charconv>

namespace fl::device {

std::string to_string(Config const& config) {
  std::string text;
  for (auto const& [name, value] : config) {
    if (!text.empty()) text += ',';
    text += name + '=' + std::to_string(value);
  }
  return text;
}

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}
}  // namespace

std::optional<Config> parse_config(std::string_view text) {
  Config config;
  text = trim(text);
  while (!text.empty()) {
    auto const comma = text.find(',');
    auto const item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    auto const eq = item.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    auto const name = trim(item.substr(0, eq));
    auto const value_text = trim(item.substr(eq + 1));
    int value = 0;
    auto const [end, ec] = std::from_chars(value_text.data(), value_text.data() + value_text.size(), value);
    if (name.empty() || ec != std::errc{} || end != value_text.data() + value_text.size())
      return std::nullopt;
    if (!config.emplace(std::string(name), value).second) return std::nullopt;
  }
  return config;
}

int value_or(Config const& config, std::string_view name, int fallback) {
  auto const it = config.find(name);
  return it == config.end() ? fallback : it->second;
}

}  // namespace fl::device
