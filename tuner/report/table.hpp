#pragma once
// A plain text table with columns sized to their widest cell, for the commands' stdout.
#include <cstdio>
#include <string>
#include <vector>

namespace fl::tuner {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string render() const;
  std::size_t size() const { return rows_.size(); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

std::string format_fixed(double value, int decimals);

}  // namespace fl::tuner
