#pragma once
// The stability study of experiments/stability, after Golden et al. 2024 ("Is Flash Attention Stable?"):
// how far the tiled FlashAttention forward (the CPU emulator, FA-2 order) lands from the float64 reference,
// against standard attention in the same precision (numerics/standard_attention: untiled, S and softmax in
// fp32, P rounded), as n and the key block size kBlockN vary. Golden et al. report about an order of
// magnitude more deviation for Flash Attention than for the baseline in bf16.
//
// Rows: every row up to full_rows_limit, above it one block of sampled_rows query rows at a seeded random
// place (the reference and the baseline compute the same rows; every row of these non-causal problems is
// statistically alike). kBlockM is fixed (block_m): the deviation comes from the key loop's rescaling.
// Each is measured twice: with O rounded to the claimed precision (what a kernel writes) and with O kept in
// fp32 (the recipe's outputs set to fp32), which separates the algorithm's own deviation from the final
// rounding that dominates the first.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/input_limits.hpp"
#include "common/precision.hpp"
#include "numerics/attention_tensors.hpp"
#include "numerics/input_families.hpp"
#include "numerics/reference.hpp"

namespace fl::numerics {

// n of one problem. The study holds about 40 bytes per n x head dim at once (Q, K, V in float64, their
// rounded copies and O in float; measured: 336 MB at n = 2^17, d = 64, 14 s on 2 cores): at the largest
// head dim (kFamilyHeadDim, 1024) 2^17 is 5.4 GB, which fits this project's 23 GB development machine,
// where 2^18 (11 GB) would take half of it. 2^17 is also 8 x the default grid's largest n.
inline constexpr common::CountRange kStabilitySeqlen{"--seqlens", 1, std::int64_t(1) << 17};

struct StabilityOptions {
  std::vector<int> seqlens = {256, 512, 1024, 2048, 4096, 8192, 16384};
  std::vector<int> block_ns = {16, 32, 64, 128, 256};
  std::vector<common::Precision> precisions = {common::Precision::bf16, common::Precision::fp16};
  std::vector<InputFamily> families = {InputFamily::normal, InputFamily::fa3_outliers};
  int head_dim = 64;
  int block_m = 64;
  int full_rows_limit = 1024;
  int sampled_rows = 128;  // a multiple of block_m
  std::uint64_t seed = 1;
  int threads = 0;
};

struct StabilityRow {
  InputFamily family = InputFamily::normal;
  common::Precision precision = common::Precision::bf16;
  std::string method;  // "standard" or "tiled"
  common::Precision output =
      common::Precision::bf16;  // what O was rounded to: the claimed precision, or fp32
  int block_n = 0;              // tiled only (0 for standard)
  int seqlen = 0;
  std::size_t rows = 0;
  double max_abs = 0, rmse = 0, rel_frobenius = 0;  // O against the float64 reference
  double seconds = 0;
};

// Throws std::invalid_argument for a block size, row count or n the study cannot use (naming it).
std::vector<StabilityRow> run_stability_study(StabilityOptions const& options,
                                              std::function<void(StabilityRow const&)> const& progress = {});
void validate_stability_options(StabilityOptions const& options);

// The study's problem for (family, precision, n) and the rows it evaluates: the GPU runner
// (tuner/run/stability_gpu_study) takes both from here, so its rows compare with the CPU rows one to one.
AttentionInputs stability_inputs(StabilityOptions const& options, InputFamily family,
                                 common::Precision precision, int n);
RowSample stability_rows(StabilityOptions const& options, common::AttentionShape const& shape, int n);

// results.csv: the header and one row's line (source: where it ran, empty on the CPU).
std::string stability_csv_header();
std::string stability_csv_line(StabilityRow const& row, int head_dim, std::string const& source);

}  // namespace fl::numerics
