#pragma once
// fa-tune --compile-only: enumerate every config of every selected family and problem class, prune what
// is derivable, compile the rest in the pool (SQLite cache first), prune on ptxas resources, and report
// one row per config. Needs no GPU.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "device/arch_limits.hpp"
#include "device/family.hpp"
#include "tuner/cli/tune_options.hpp"

namespace fl::tuner {

struct CompileOnlyRow {
  std::string family;
  std::string problem_class;  // "bf16 d128 full fwd"
  std::string config;
  bool kept = false;
  std::string reason;  // why rejected (pruned before compiling, compile error, resources)
  bool compiled = false;
  int registers = 0;
  std::size_t shared_bytes = 0;  // static + dynamic, the largest over the config's launches
  std::size_t spill_bytes = 0;   // stores + loads
  double compile_ms = 0.0;       // NVRTC time, now or when the cached entry was made
  bool from_cache = false;
};

struct CompileOnlyReport {
  std::vector<CompileOnlyRow> rows;
  int cache_hits = 0;
  int compiled = 0;
  double wall_s = 0.0;
  int stop_signal = 0;  // the signal that stopped the run early, 0 when it ran to the end
};

// The problems the options select: one per (dtype, head dim, causal, direction), each at the headline
// shape of the first --seqlen (the compiled code depends on the class, not on the sizes).
std::vector<device::Problem> selected_problem_classes(TuneOptions const& options);

// Families named by --family (all when none). Throws UsageError for an unknown name.
std::vector<std::unique_ptr<device::Family>> selected_families(TuneOptions const& options);

// `stop` (when given) returns the signal that asked to stop, 0 for none: asked before each row, so a
// stopped run reports the rows finished so far (whose programs are in the cache) and sets stop_signal.
CompileOnlyReport run_compile_only(TuneOptions const& options, runtime::TargetArch arch,
                                   std::filesystem::path const& kernels_dir,
                                   std::filesystem::path const& db_path, device::ArchLimits const& limits,
                                   std::function<int()> const& stop = {});

std::string render_compile_only(CompileOnlyReport const& report);

}  // namespace fl::tuner
