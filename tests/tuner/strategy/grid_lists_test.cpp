// The grid lists scripts/gpu/grid.sh tunes (experiments/tuner/grids/*.txt): every line is an fa-tune
// selection fa-tune accepts, names at least one (family, problem) pair with configs to try, and the headline
// grid covers every (family, problem) of issue 14 item 4 that a family of the registry can run: a family
// added to the registry without a grid line fails here, not hours into the device calls.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "device/families/registry.hpp"
#include "tuner/cli/tune_options.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/tune/tune_command.hpp"

using namespace fl::device;
using namespace fl::tuner;

namespace {

std::filesystem::path grids_dir() {
  return std::filesystem::path(FA_SOURCE_DIR) / "experiments" / "tuner" / "grids";
}

// Each non-comment line, parsed as fa-tune --arch sm90 LINE (as grid.sh runs it).
std::vector<std::pair<std::string, TuneOptions>> grid_lines(std::filesystem::path const& path) {
  std::vector<std::pair<std::string, TuneOptions>> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto const start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    std::vector<std::string> words{"fa-tune", "--arch", "sm90"};
    std::stringstream ss(line);
    for (std::string word; ss >> word;) words.push_back(word);
    std::vector<char const*> argv;
    for (auto const& w : words) argv.push_back(w.c_str());
    INFO(path.filename().string() << ": " << line);
    TuneOptions options;
    REQUIRE_NOTHROW(options = parse_tune_options(int(argv.size()), argv.data()));
    lines.emplace_back(line, options);
  }
  return lines;
}

std::string pair_key(std::string_view family, Problem const& problem) {
  return std::string(family) + " " + describe(problem);
}

}  // namespace

TEST_CASE("every grid list line is a selection fa-tune accepts, with configs to try", "[tuner][grid]") {
  int files = 0;
  for (auto const& entry : std::filesystem::directory_iterator(grids_dir())) {
    if (entry.path().extension() != ".txt") continue;
    ++files;
    auto const lines = grid_lines(entry.path());
    CHECK_FALSE(lines.empty());
    for (auto const& [line, options] : lines) {
      INFO(entry.path().filename().string() << ": " << line);
      auto const pairs = run_pairs(options, [](Family const&, Problem const&) { return true; });
      REQUIRE_FALSE(pairs.empty());
      std::size_t smallest = SIZE_MAX, largest = 0;
      for (auto const& pair : pairs) {
        auto const size = family_space(*pair.family, pair.problem).valid_points().size();
        INFO(pair_key(pair.family->name(), pair.problem));
        CHECK(size > 0);
        smallest = std::min(smallest, size);
        largest = std::max(largest, size);
      }
      // A budget under one evaluation per problem would leave problems with no search at all.
      if (options.budget) CHECK(std::size_t(*options.budget) >= 2 * pairs.size());
      std::printf("%s: %zu problems, spaces %zu..%zu, budget %s\n", entry.path().filename().c_str(),
                  pairs.size(), smallest, largest,
                  options.budget ? std::to_string(*options.budget / int(pairs.size())).append(" each").c_str()
                                 : "whole space");
    }
  }
  CHECK(files >= 2);
}

TEST_CASE("the headline grid covers every family that can run each headline problem", "[tuner][grid]") {
  std::set<std::string> listed;
  for (auto const& [line, options] : grid_lines(grids_dir() / "headline.txt"))
    for (auto const& pair : run_pairs(options, [](Family const&, Problem const&) { return true; }))
      listed.insert(pair_key(pair.family->name(), pair.problem));

  int wanted = 0;
  for (auto const dtype :
       {fl::common::Precision::bf16, fl::common::Precision::fp16, fl::common::Precision::fp8_e4m3})
    for (auto const direction : {Direction::forward, Direction::backward}) {
      if (dtype == fl::common::Precision::fp8_e4m3 && direction == Direction::backward) continue;
      for (int d : {64, 128, 256})
        for (bool causal : {false, true})
          for (int n : {1024, 2048, 4096, 8192, 16384}) {
            auto const problem = headline_problem(n, d, causal, dtype, direction);
            for (auto const& family : all_families()) {
              if (family->unsupported(problem)) continue;
              ++wanted;
              INFO("no line of headline.txt tunes " << pair_key(family->name(), problem));
              CHECK(listed.contains(pair_key(family->name(), problem)));
            }
          }
    }
  CHECK(wanted > 400);  // 440 on 2026-12-01: a registry that ran nothing would pass vacuously
}
