#pragma once
// The FP8 error analysis (experiments/fp8_error_analysis) measured on the GPU: the same inputs (numerics'
// input families, B = H = 1, non-causal, seed 1, bf16 values), the same rows (all up to n = 1024, else one
// 128-row query tile at the same seeded place), the same variants (e4m3/e5m2 x per-tensor/per-block with
// 128-row blocks x with/without the incoherent rotation) and the same RMSE as numerics/fp8_study, but O
// from an FP8 kernel family (fa2_fp8, its default config) instead of the CPU emulator. Rows come out in
// results.csv's columns plus `source` (GPU, family, config), so they merge into the report's table.
// bf16_pv: only FlashAttention-3's recipe (e4m3, per block, incoherent), with O += P V in FP8 and in bf16
// (fa3_sm90's kPvBf16, numerics' bf16_pv), each GPU row followed by the emulator's RMSE on the same inputs
// and rows, replaying what the kernel computes (its kBlockN, key blocks last to first).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "device/compile/compile_config.hpp"
#include "device/family.hpp"
#include "numerics/input_families.hpp"
#include "runtime/result.hpp"

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
  bool bf16_pv = false;
};

// One measured (or, method "emulated", replayed) RMSE of O.
struct Fp8ErrorStudyRow {
  std::string method;  // "gpu" or "emulated"
  common::Precision precision = common::Precision::fp8_e4m3;
  common::Fp8Scaling scaling = common::Fp8Scaling::per_tensor;
  bool incoherent = false;
  bool bf16_pv = false;
  numerics::InputFamily recipe = numerics::InputFamily::normal;
  int head_dim = 0, seqlen = 0;
  std::size_t rows = 0;
  double o_rmse = 0.0, o_rel = 0.0;
  std::string config;         // the kernel config (commas as ';')
  std::string label() const;  // "fp8_e4m3 per_block incoherent" (+ " bf16_pv")
};
std::string csv_line(Fp8ErrorStudyRow const& row, std::string const& source);

// The CSV header of numerics' results.csv plus ",source".
std::string fp8_error_study_header();

// Needs a current context. One row per (recipe, head dim, n, variant), method "gpu", and the emulated rows
// (bf16_pv); `progress` receives each as it is made.
runtime::Result<std::vector<Fp8ErrorStudyRow>> run_fp8_error_study_rows(
    device::Family const& family, device::CompileSpec const& spec, Fp8ErrorStudyOptions const& options,
    std::function<void(Fp8ErrorStudyRow const&)> const& progress = {});
// The same as CSV (header first); `progress` receives each line.
runtime::Result<std::string> run_fp8_error_study(
    device::Family const& family, device::CompileSpec const& spec, Fp8ErrorStudyOptions const& options,
    std::function<void(std::string const&)> const& progress = {});

// The rows the study evaluates for sequence length n (numerics/fp8_study.cpp's choice, reproduced).
std::vector<std::size_t> fp8_study_rows(int n, Fp8ErrorStudyOptions const& options);

}  // namespace fl::tuner
