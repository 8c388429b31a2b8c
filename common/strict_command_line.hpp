#pragma once
// Boost.Program_options, strictly: by default it ignores a word that belongs to no option
// ("fa-check --q q.npy stray" ran and exited 0). Every command's option parser goes through here, so a
// stray word is one line naming it and exit code 2, like any other bad value. Header-only, and included
// only by the commands' option parsers (the rest of common/ needs nothing beyond the standard library).
#include <boost/program_options.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "common/input_limits.hpp"

namespace fl::common {

// A word of the command line with its control bytes written as \xNN, so that quoting it keeps the
// complaint one line.
inline std::string printable_word(std::string const& word) {
  std::string out;
  for (char c : word) {
    auto const byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      out += c;
      continue;
    }
    char const* const hex = "0123456789abcdef";
    out += std::string("\\x") + hex[byte >> 4] + hex[byte & 15];
  }
  return out;
}

// Parses and notifies; throws boost::program_options::error (one line) for a bad option or stray word.
// A word holding a control byte (a newline in --dtype or a path) is refused first: every complaint that
// quotes a value would otherwise break over two lines.
inline boost::program_options::variables_map parse_strictly(
    int argc, char const* const argv[], boost::program_options::options_description const& options) {
  namespace po = boost::program_options;
  for (int i = 1; i < argc; ++i) {
    std::string const word = argv[i];
    if (printable_word(word) != word)
      throw po::error("argument '" + printable_word(word) +
                      "' holds a control byte (every option and value is printable text)");
  }
  constexpr char const* kStray = "flashlab-stray-argument";
  po::options_description all;
  all.add(options);
  all.add_options()(kStray, po::value<std::vector<std::string>>());
  po::positional_options_description strays;
  strays.add(kStray, -1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(all).positional(strays).run(), vm);
  if (vm.count(kStray))
    throw po::error("unexpected argument '" + vm[kStray].as<std::vector<std::string>>().front() +
                    "' (every value belongs to an --option)");
  // An empty value ("--db ''", "--replay ''") read as "not given": fa-tune ran on the default database,
  // answered without the recording, and exited 0.
  for (auto const& [name, value] : vm) {
    if (value.defaulted() || name == kStray) continue;
    // A switch (--help, --causal) takes no value; boost stores "" for it.
    auto const* option = all.find_nothrow(name, false);
    if (!option || option->semantic()->max_tokens() == 0) continue;
    bool empty = false;
    if (auto const* text = boost::any_cast<std::string>(&value.value())) empty = text->empty();
    if (auto const* texts = boost::any_cast<std::vector<std::string>>(&value.value()))
      for (auto const& text : *texts) empty = empty || text.empty();
    if (empty) throw po::error("--" + name + " '' is empty (give it a value)");
  }
  po::notify(vm);
  return vm;
}

// A count option, read as the text typed and judged by parse_count when the options are notified (inside
// parse_strictly), into *target: "99999999999", "12abc", "1e3" and "-1" are each one line naming the option
// and its range. Read as an int by boost they were "the argument ('99999999999') for option '--x' is
// invalid", with no range, and "-1" became 2^64 - 1 for an unsigned one. range.max must fit Int; range.what
// is the option as typed ("--block"). Add ->default_value("64") for a default (it is judged the same way).
template <class Int>
boost::program_options::typed_value<std::string>* count_value(CountRange const& range, Int* target) {
  return boost::program_options::value<std::string>()->notifier([range, target](std::string const& text) {
    auto const parsed = parse_count(range, text);
    if (!parsed.ok()) throw boost::program_options::error(parsed.error);
    *target = static_cast<Int>(parsed.value);
  });
}

// The same judgement for a count option described as po::value<std::string>() apart from the variable it
// fills (fa-mutate's options live in their own file): the value of range.what ("--seqlen") in vm.
inline std::int64_t count_of(boost::program_options::variables_map const& vm, CountRange const& range) {
  auto const parsed = parse_count(range, vm[std::string(range.what.substr(2))].as<std::string>());
  if (!parsed.ok()) throw boost::program_options::error(parsed.error);
  return parsed.value;
}

// A comma-separated list of counts ("512,1024"), each a whole number in `range` (range.what is the option as
// typed) and each named once (a value named twice ran its rows twice); throws
// boost::program_options::error, one line naming the option: "99999999999" said only "expected
// comma-separated positive integers", with no range.
inline std::vector<int> parse_count_list(CountRange const& range, std::string const& text) {
  std::string const flag(range.what);
  auto const not_a_list = [&] {
    return boost::program_options::error(flag + " " + text + ": expected comma-separated positive integers");
  };
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t const comma = std::min(text.find(',', start), text.size());
    std::string const item = text.substr(start, comma - start);
    bool const whole = !item.empty() && item != "-" &&
                       item.find_first_not_of("0123456789", item[0] == '-') == std::string::npos;
    if (!whole) throw not_a_list();
    auto const parsed = parse_count(range, item);  // out of range, however far: the range named
    if (!parsed.ok()) throw boost::program_options::error(parsed.error);
    for (int earlier : out)
      if (earlier == parsed.value)
        throw boost::program_options::error(flag + " " + text + ": " + item + " is named twice");
    out.push_back(static_cast<int>(parsed.value));
    start = comma + 1;
  }
  return out;
}

// parse_count_list as an option's value, judged when the options are notified, into *target. range.max
// must fit an int.
inline boost::program_options::typed_value<std::string>* count_list_value(CountRange const& range,
                                                                          std::vector<int>* target) {
  return boost::program_options::value<std::string>()->notifier(
      [range, target](std::string const& text) { *target = parse_count_list(range, text); });
}

// A positive finite number (a scale, seconds) up to `max`, read as text into *target: "1x", "nan", "inf",
// "0" and "1e400" are one line naming the option ("--scale '1x' is not allowed (a positive finite
// number)"), where boost said "the argument ('1x') for option '--scale' is invalid" and took "inf".
inline boost::program_options::typed_value<std::string>* positive_number_value(
    std::string_view option, double* target, double max = std::numeric_limits<double>::max()) {
  return boost::program_options::value<std::string>()->notifier(
      [option, target, max](std::string const& text) {
        double value = 0;
        auto const* end = text.data() + text.size();
        auto const [stop, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || ec != std::errc() || stop != end || !std::isfinite(value) || !(value > 0) ||
            value > max) {
          std::string allowed = "a positive finite number";
          if (max < std::numeric_limits<double>::max())
            allowed += " up to " + std::to_string(std::llround(max));
          throw boost::program_options::error(std::string(option) + " '" + text + "' is not allowed (" +
                                              allowed + ")");
        }
        *target = value;
      });
}

}  // namespace fl::common
