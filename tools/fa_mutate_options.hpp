#pragma once
// fa-mutate's command line: the options it takes (and the racecheck child's hidden ones) and the parsers
// of its list values, each refusing a bad value with one line naming it and what is allowed (BadInput,
// exit 2). tools/fa_mutate_main.cpp runs what they describe.
#include <boost/program_options.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "common/input_limits.hpp"
#include "common/precision.hpp"
#include "numerics/emulator/emulator.hpp"
#include "numerics/emulator/prepared_problem.hpp"
#include "numerics/input_families.hpp"
#include "numerics/mutants/catalogue.hpp"

namespace fl::tools::fa_mutate {

struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

boost::program_options::options_description fa_mutate_options();
// The child side of the racecheck (tools/fa_mutate/racecheck_probe.hpp): fa-mutate runs itself under
// compute-sanitizer with these; not for users, so not in --help.
boost::program_options::options_description fa_mutate_hidden_options();

// Comma-separated items of every occurrence of a list option, empty items dropped.
std::vector<std::string> split_list(std::vector<std::string> const& raw);
std::vector<common::Precision> parse_dtypes(std::vector<std::string> const& raw);
std::vector<numerics::emulator::LoopOrder> parse_cpu_families(std::vector<std::string> const& raw);
std::vector<numerics::mutants::MutantId> parse_mutants(std::vector<std::string> const& raw);
std::vector<numerics::InputFamily> parse_inputs(std::vector<std::string> const& raw);
// fa-mutate's own counts with their ranges (the shape's are common/input_limits.hpp's), read as text and
// judged by common::count_of: "99999999999" named no range when boost read it as an int.
inline constexpr common::CountRange kBlockM{"--block-m", 1, numerics::emulator::kMaxTile};
inline constexpr common::CountRange kBlockN{"--block-n", 1, numerics::emulator::kMaxTile};
inline constexpr common::CountRange kRaceSeqlen{"--race-seqlen", 0, common::kSeqlen.max,
                                                "0: only the campaign's inputs"};
inline constexpr common::CountRange kRacecheckSeconds{"--racecheck-timeout", 1, 3600};

std::string today();    // "2026-12-01" (UTC), for the JSON report
void list_catalogue();  // --list: the mutant catalogue, one line a mutant

}  // namespace fl::tools::fa_mutate
