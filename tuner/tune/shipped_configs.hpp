#pragma once
// fa-tune on a machine without a GPU: the best configs known for the target (the shipped seeds, loaded
// into SQLite on first use, and anything this database measured), each with its provenance (GPU,
// driver, date, source) and compile-checked with NVRTC for the target here and now.
#include <filesystem>
#include <string>

#include "runtime/target_arch.hpp"

namespace fl::tuner {

struct ShippedReport {
  std::string table;
  int configs = 0;
  int compile_failures = 0;
  int seeds_loaded = 0;
};

ShippedReport report_shipped_configs(runtime::TargetArch arch, std::filesystem::path const& kernels_dir,
                                     std::filesystem::path const& db_path);

}  // namespace fl::tuner
