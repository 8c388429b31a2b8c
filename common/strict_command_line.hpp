#pragma once
// Boost.Program_options, strictly: by default it ignores a word that belongs to no option
// ("fa-check --q q.npy stray" ran and exited 0). Every command's option parser goes through here, so a
// stray word is one line naming it and exit code 2, like any other bad value. Header-only, and included
// only by the commands' option parsers (the rest of common/ needs nothing beyond the standard library).
#include <boost/program_options.hpp>

#include <string>
#include <vector>

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
  po::notify(vm);
  return vm;
}

}  // namespace fl::common
