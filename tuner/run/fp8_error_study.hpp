#pragma once
// The FP8 error analysis (experiments/fp8_error_analysis) measured on the GPU: the same inputs (numerics'
// input families, B = H = 1, non-causal, seed 1, bf16 values), the same rows (all up to n = 1024, else one
// 128-row query tile at the same seeded place), the same variants (e4m3/e5m2 x per-tensor/per-block with
// 128-row blocks x with/without the incoherent rotation) and the same RMSE as numerics/fp8_study, but O
// from an FP8 kernel family (fa2_fp8, its default config) instead of the CPU emulator. Rows come out in
// results.csv's columns plus `source` (GPU, family, config), so they merge into the report's table.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "numerics/input_families.hpp"
#include "runtime/result.hpp"
#include "tuner/compile/compile_config.hpp"
#include "tuner/family.hpp"

namespace fl::tuner {

struct Fp8ErrorStudyOptions {
  std::vector<int> head_dims = {64, 128, 256};
  std::vector<int> seqlens = {512, 1024, 2048, 4096, 8192, 16384};
  std::vector<numerics::InputFamily> recipes = {numerics::InputFamily::normal,
                                                numerics::InputFamily::fa3_outliers};
  int tile = 128;              // the study's per-block scaling block and sampled query tile
  int full_rows_limit = 1024;  // up to this n every row is evaluated
  std::uint64_t seed = 1;
  std::string source;  // e.g. "NVIDIA H200 fa2_fp8 sm_90a"
};

// The CSV header of numerics' results.csv plus ",source".
std::string fp8_error_study_header();

// Needs a current context. One CSV line per (recipe, head dim, n, variant), method "gpu"; `progress`
// receives each line as it is made.
runtime::Result<std::string> run_fp8_error_study(
    Family const& family, CompileSpec const& spec, Fp8ErrorStudyOptions const& options,
    std::function<void(std::string const&)> const& progress = {});

// The rows the study evaluates for sequence length n (numerics/fp8_study.cpp's choice, reproduced).
std::vector<std::size_t> fp8_study_rows(int n, Fp8ErrorStudyOptions const& options);

}  // namespace fl::tuner
