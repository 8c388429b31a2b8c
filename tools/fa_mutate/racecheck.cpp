#include "tools/fa_mutate/racecheck.hpp"

#include <unistd.h>

#include <cstdlib>
#include <regex>
#include <sstream>

#include "runtime/cuda_paths.hpp"
#include "tools/fa_mutate/timed_child.hpp"

namespace fl::tools::fa_mutate {

namespace {

constexpr char const* kSanitizerName = "compute-sanitizer";

bool is_executable_file(std::filesystem::path const& p) {
  std::error_code error;
  return std::filesystem::is_regular_file(p, error) && ::access(p.c_str(), X_OK) == 0;
}

std::string last_line(std::string_view text) {
  std::size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos) return "(no output)";
  std::size_t const start = text.rfind('\n', end);
  return std::string(text.substr(start == std::string_view::npos ? 0 : start + 1,
                                 end + 1 - (start == std::string_view::npos ? 0 : start + 1)));
}

std::string seconds_text(std::chrono::milliseconds limit) {
  std::ostringstream out;
  out << std::chrono::duration<double>(limit).count() << " s";
  return out.str();
}

std::string counts(RacecheckSummary const& s) {
  return std::to_string(s.hazards) + " hazard" + (s.hazards == 1 ? "" : "s") + " (" +
         std::to_string(s.errors) + " error" + (s.errors == 1 ? "" : "s") + ", " +
         std::to_string(s.warnings) + " warning" + (s.warnings == 1 ? "" : "s") + ")";
}

}  // namespace

std::optional<std::filesystem::path> find_compute_sanitizer() {
  if (char const* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      if (dir.empty()) continue;
      std::filesystem::path const candidate = std::filesystem::path(dir) / kSanitizerName;
      if (is_executable_file(candidate)) return candidate;
    }
  }
  std::filesystem::path const in_toolkit = runtime::cuda_home() / "bin" / kSanitizerName;
  if (is_executable_file(in_toolkit)) return in_toolkit;
  return std::nullopt;
}

std::filesystem::path default_racecheck_probe() {
  if (char const* env = std::getenv("FA_MUTATE"); env && *env) return env;
  std::error_code error;
  auto const self = std::filesystem::read_symlink("/proc/self/exe", error);
  return (error ? std::filesystem::path("fa-mutate") : self.parent_path() / "fa-mutate");
}

RacecheckSetup discover_racecheck() {
  RacecheckSetup setup;
  setup.sanitizer = find_compute_sanitizer();
  if (!setup.sanitizer)
    setup.missing = "no compute-sanitizer on PATH or in " + (runtime::cuda_home() / "bin").string();
  setup.probe = default_racecheck_probe();
  return setup;
}

std::optional<RacecheckSummary> parse_racecheck_summary(std::string_view output) {
  static std::regex const line(
      R"(RACECHECK SUMMARY:\s*(\d+) hazards? displayed\s*\(\s*(\d+) errors?,\s*(\d+) warnings?\s*\))");
  std::optional<RacecheckSummary> last;
  std::string const text(output);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
    RacecheckSummary s;
    s.hazards = std::stoi((*it)[1].str());
    s.errors = std::stoi((*it)[2].str());
    s.warnings = std::stoi((*it)[3].str());
    last = s;
  }
  return last;
}

RacecheckRun run_racecheck(RacecheckSetup const& setup, std::vector<std::string> const& probe_arguments) {
  RacecheckRun run;
  if (!setup.sanitizer) {
    run.failure = setup.missing;
    return run;
  }
  std::vector<std::string> argv{setup.sanitizer->string(), "--tool", "racecheck", setup.probe.string()};
  argv.insert(argv.end(), probe_arguments.begin(), probe_arguments.end());
  TimedChild const child = run_timed_child(argv, setup.limit);
  std::string const tail = last_line(child.output);
  if (child.timed_out) {
    run.failure = "racecheck did not finish within " + seconds_text(setup.limit) +
                  " (killed with its process group; fa-mutate --racecheck-timeout)";
    return run;
  }
  if (child.exit_code != 0) {
    run.failure = "racecheck run failed (" + child.how_it_ended() + "): " + tail;
    return run;
  }
  if (child.output.find(kRacecheckProbeRan) == std::string::npos) {
    run.failure =
        "racecheck run never ran the kernel (no \"" + std::string(kRacecheckProbeRan) + "\" line): " + tail;
    return run;
  }
  run.summary = parse_racecheck_summary(child.output);
  if (!run.summary) {
    run.failure = "racecheck printed no RACECHECK SUMMARY line: " + tail;
    return run;
  }
  std::size_t const at = child.output.rfind("RACECHECK SUMMARY:");
  run.summary_line = child.output.substr(at, child.output.find('\n', at) - at);
  return run;
}

numerics::mutants::RaceToolReport racecheck_report(RacecheckRun const& mutant,
                                                   std::optional<RacecheckRun> const& control,
                                                   std::string const& problem) {
  numerics::mutants::RaceToolReport report;
  if (!mutant.summary) {
    report.verdict = mutant.failure + ": races were only tested by reruns";
    return report;
  }
  report.evidence = mutant.summary_line;
  if (mutant.summary->errors == 0) {
    report.verdict = "racecheck: " + counts(*mutant.summary) + " on " + problem + ", and reruns agreed";
    return report;
  }
  if (!control || !control->summary) {
    report.verdict = "racecheck: " + counts(*mutant.summary) + " on " + problem +
                     ", but the correct kernel's control run gave no summary (" +
                     (control ? control->failure : std::string("not run")) + ")";
    return report;
  }
  if (control->summary->errors > 0) {
    report.verdict = "racecheck: " + counts(*mutant.summary) + " on " + problem +
                     ", but the correct kernel has " + counts(*control->summary) +
                     " too: no evidence against the mutant";
    return report;
  }
  report.kills = true;
  report.verdict = "racecheck: " + counts(*mutant.summary) + " on " + problem +
                   " (correct kernel: " + counts(*control->summary) + ")";
  return report;
}

}  // namespace fl::tools::fa_mutate
