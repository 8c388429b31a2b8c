#include "tuner/report/table.hpp"

#include <algorithm>

namespace fl::tuner {

std::string TextTable::render() const {
  std::vector<std::size_t> widths(header_.size(), 0);
  auto widen = [&](std::vector<std::string> const& row) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], row[i].size());
  };
  widen(header_);
  for (auto const& row : rows_) widen(row);
  std::string out;
  auto emit = [&](std::vector<std::string> const& row) {
    for (std::size_t i = 0; i < widths.size(); ++i) {
      std::string const cell = i < row.size() ? row[i] : "";
      out += cell;
      if (i + 1 < widths.size()) out += std::string(widths[i] - cell.size() + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  };
  emit(header_);
  std::vector<std::string> rule;
  for (auto w : widths) rule.emplace_back(w, '-');
  emit(rule);
  for (auto const& row : rows_) emit(row);
  return out;
}

std::string format_fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace fl::tuner
