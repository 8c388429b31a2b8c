// common/strict_command_line.hpp: the one strict parser every command's options go through. A stray word, a
// control byte and an empty value are refused; counts and positive numbers are read as typed and judged
// against their stated range, so that each complaint is one line naming the option and what is allowed.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/strict_command_line.hpp"

namespace po = boost::program_options;
using namespace fl::common;

namespace {

struct Parsed {
  int block = 0;
  std::int64_t seed = 0;
  double scale = 0;
  po::variables_map vm;
};

Parsed parse(std::vector<char const*> args) {
  Parsed p;
  constexpr CountRange kBlock{"--block", 1, 1024};
  po::options_description options;
  options.add_options()("block", count_value(kBlock, &p.block)->default_value("64"), "")(
      "seed", count_value(kSeed, &p.seed), "")("scale", positive_number_value("--scale", &p.scale, 100.0),
                                               "")("name", po::value<std::string>(), "")(
      "names", po::value<std::vector<std::string>>()->composing(), "");
  args.insert(args.begin(), "tool");
  p.vm = parse_strictly(static_cast<int>(args.size()), args.data(), options);
  return p;
}

}  // namespace

TEST_CASE("strict command line: counts are judged as typed, with the range in the complaint",
          "[common][cli]") {
  CHECK(parse({}).block == 64);  // the default is judged (and read) the same way
  CHECK(parse({"--block", "1024"}).block == 1024);
  CHECK(parse({"--seed", "9223372036854775807"}).seed == INT64_MAX);
  CHECK_THROWS_WITH(parse({"--block", "99999999999"}), "--block 99999999999 is not allowed (1..1024)");
  CHECK_THROWS_WITH(parse({"--block", "99999999999999999999999"}),
                    "--block 99999999999999999999999 is not allowed (1..1024)");
  CHECK_THROWS_WITH(parse({"--block", "12abc"}), "--block '12abc' is not allowed (a whole number, 1..1024)");
  CHECK_THROWS_WITH(parse({"--block", "1e3"}), "--block '1e3' is not allowed (a whole number, 1..1024)");
  CHECK_THROWS_WITH(parse({"--block", "0"}), "--block 0 is not allowed (1..1024)");
  CHECK_THROWS_WITH(parse({"--seed", "-1"}), "--seed -1 is not allowed (0..9223372036854775807)");
}

TEST_CASE("strict command line: positive numbers up to a bound", "[common][cli]") {
  CHECK(parse({"--scale", "0.125"}).scale == 0.125);
  CHECK(parse({"--scale", "100"}).scale == 100.0);
  for (char const* bad : {"0", "-1", "nan", "inf", "1e400", "1x", "100.5", " 1"})
    CHECK_THROWS_WITH(parse({"--scale", bad}), std::string("--scale '") + bad +
                                                   "' is not allowed (a positive finite number up to 100)");
}

TEST_CASE("strict command line: strays, control bytes, empty values and repeats are one line each",
          "[common][cli]") {
  CHECK_THROWS_WITH(parse({"stray"}), "unexpected argument 'stray' (every value belongs to an --option)");
  CHECK_THROWS_WITH(parse({"--name", "a\nb"}),
                    "argument 'a\\x0ab' holds a control byte (every option and value is printable text)");
  CHECK_THROWS_WITH(parse({"--name", ""}), "--name '' is empty (give it a value)");
  CHECK_THROWS_WITH(parse({"--names", "x", "--names", ""}), "--names '' is empty (give it a value)");
  CHECK_THROWS_AS(parse({"--name", "a", "--name", "b"}), po::error);  // given twice
  CHECK_THROWS_AS(parse({"--block"}), po::error);                     // no value
  CHECK_THROWS_AS(parse({"--no-such-option"}), po::error);
}
