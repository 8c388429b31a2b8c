#pragma once
// fa-mutate's second race detector: compute-sanitizer's racecheck on a race mutant whose reruns all agreed.
// Reruns catch a race only when the warp interleaving of some run changes a bit; on the H200 bwd-race
// never did (the missing barrier is real, but the late cp.async copies never overtook the slow warps'
// reads), while racecheck reports the shared-memory hazards of a missing barrier whether or not they change
// a result. The mutant runs once under `compute-sanitizer --tool racecheck` as a child process: fa-mutate's
// hidden --racecheck-probe (racecheck_probe.hpp) on a tiny problem at the runner's config, within a time
// limit, in its own process group (timed_child.hpp), so a hang or crash of either costs this answer only.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numerics/campaign/mutant_runner.hpp"

namespace fl::tools::fa_mutate {

// The probe's problem: racecheck slows a kernel by orders of magnitude, so it stays tiny; n = 300 still
// walks 5 query tiles of 64 per key block, enough for a barrier missing between tiles to act.
inline constexpr int kRacecheckSeqlen = 300;
inline constexpr int kRacecheckBatch = 1;
inline constexpr int kRacecheckHeads = 2;
// The child compiles its program (NVRTC, seconds; none with --compile-db warm) and runs one tiny backward
// under racecheck; scripts/gpu/sanitizers.sh allows 120 s for fa-bench's five backward checks under it.
// Not measured for the probe here (no GPU): fa-mutate --racecheck-timeout changes it.
inline constexpr std::chrono::seconds kDefaultRacecheckLimit{240};
// The line the probe prints when the mutant ran: without it, a summary proves nothing (a probe that
// failed before launching anything gets "0 hazards" too).
inline constexpr std::string_view kRacecheckProbeRan = "racecheck probe ran: ";

struct RacecheckSetup {
  std::optional<std::filesystem::path> sanitizer;  // nullopt: not found, or refused (`missing` says why)
  std::string missing;                             // "no compute-sanitizer on PATH or in ...": the reason
  std::filesystem::path probe;                     // the program that runs one mutant (fa-mutate)
  std::chrono::milliseconds limit = kDefaultRacecheckLimit;
};

// compute-sanitizer on PATH, else <cuda_home>/bin/compute-sanitizer ($CUDA_HOME, the configured toolkit,
// /usr/local/cuda); nullopt when neither is an executable file.
std::optional<std::filesystem::path> find_compute_sanitizer();
// The probe: $FA_MUTATE when set, else fa-mutate beside the running executable (fa-mutate itself; the test
// binaries find the one built beside them).
std::filesystem::path default_racecheck_probe();
// The setup fa-mutate uses without options: the sanitizer found (or the reason it was not), the default
// probe and time limit.
RacecheckSetup discover_racecheck();

struct RacecheckSummary {
  int hazards = 0, errors = 0, warnings = 0;
};
// The last "RACECHECK SUMMARY: N hazard(s) displayed (E error(s), W warning(s))" line of the output;
// nullopt without one.
std::optional<RacecheckSummary> parse_racecheck_summary(std::string_view output);

// One probe run under racecheck: its summary, or why there is none (the run timed out, crashed, failed,
// or never said it ran the mutant), with the output's last line.
struct RacecheckRun {
  std::optional<RacecheckSummary> summary;
  std::string failure;
  std::string summary_line;  // the sanitizer's own line, for the evidence
};
RacecheckRun run_racecheck(RacecheckSetup const& setup, std::vector<std::string> const& probe_arguments);

// The campaign's report from the mutant's run and, when the mutant shows hazards, the correct kernel's
// (`control`, nullopt when not run): a kill only when the mutant has errors and the correct kernel none.
numerics::mutants::RaceToolReport racecheck_report(RacecheckRun const& mutant,
                                                   std::optional<RacecheckRun> const& control,
                                                   std::string const& problem);

}  // namespace fl::tools::fa_mutate
