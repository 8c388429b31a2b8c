#pragma once
// fa-tune on a machine without a GPU: for every problem asked (--dtype, --head-dim, --seqlen, --causal,
// --direction) and every family that can run it, the config to use: tuned for that problem, else the nearest
// tuned shape's (named), else the family default (tune/nearest_tuned.hpp), from the best configs known for
// the target (the shipped seeds, loaded into SQLite on first use, and anything this database measured).
// The known rows those answers use are listed with their provenance (GPU, driver, date, source) and
// compile-checked with NVRTC for the target here and now; the others are only counted.
// The database may hold rows of several GPUs of the target (the seeds' card, a user's own tuning on another):
// `gpu_name_part` (--measured-on) keeps the rows of the GPUs whose name contains it, in any case; empty
// keeps all, and a problem tuned on several then answers with the fastest row (nearest_tuned's tie-break).
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "device/problem.hpp"
#include "runtime/target_arch.hpp"

namespace fl::tuner {

struct ShippedReport {
  std::string table;
  std::string answers;  // the table of answers for the problems asked
  int tuned = 0, nearest = 0, defaults = 0;
  int configs = 0;  // best configs known for the target
  int listed = 0;   // of them, the rows the answers use (listed and compile-checked)
  int compile_failures = 0;
  int seeds_loaded = 0;
  // Best configs known for the target per GPU name, before `gpu_name_part` chose among them, by name.
  std::vector<std::pair<std::string, int>> gpus;
  bool measured_on_matched = true;  // false: `gpu_name_part` named none of `gpus` (nothing answered)
};

ShippedReport report_shipped_configs(runtime::TargetArch arch, std::filesystem::path const& kernels_dir,
                                     std::filesystem::path const& db_path,
                                     std::vector<device::Problem> const& problems,
                                     std::vector<std::string> const& families,
                                     std::string const& gpu_name_part = {});

// "NVIDIA H100 80GB HBM3 (40), NVIDIA H200 (261)": the GPUs of a report by name, for its notices.
std::string describe_gpus(ShippedReport const& report);

}  // namespace fl::tuner
