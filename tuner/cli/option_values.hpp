#pragma once
// The value readers of fa-tune's command line (tune_options.cpp): whole numbers and comma lists in a range,
// a value from a fixed set, no item named twice; each bad value one UsageError naming its option.
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tuner/cli/tune_options.hpp"

namespace fl::tuner {

// A list option's item named twice would be tuned twice (fa-tune --family naive --family naive compiled
// every config twice): refused.
template <class T>
void refuse_repeats(std::vector<T> const& values, std::string const& option) {
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (values[i] == values[j]) {
        std::ostringstream text;
        text << "--" << option << " names " << values[i] << " twice (each value once)";
        throw UsageError(text.str());
      }
}

std::vector<std::string> split_commas(std::vector<std::string> const& items);

void require_one_of(std::string const& value, std::set<std::string> const& allowed,
                    std::string const& option);

// One whole number in [min, max]; anything else ("12x", "99999999999", "") a UsageError naming `option`
// and the range.
int parse_whole_number(std::string const& text, std::string const& option, int min, int max);

// "64,128" -> {64, 128}; a non-number or a value outside [min, max] is a UsageError naming `option`.
std::vector<int> parse_int_list(std::string const& text, std::string const& option, int min, int max);

}  // namespace fl::tuner
