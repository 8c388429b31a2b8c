#pragma once
// The FP8 error analysis (experiments/fp8_error_analysis): RMSE of O (forward) and of dQ, dK, dV
// (backward) against the float64 reference, for standard attention ("baseline": untiled, S and softmax in
// fp32, P rounded; in fp16, bf16 and FP8 per-tensor without incoherent processing) and the tiled
// FlashAttention algorithm ("tiled": the CPU emulator, FA-2 loop order, 128 x 128 tiles), in fp16/bf16 and in
// FP8 e4m3/e5m2 with per-tensor or per-block scaling, with and without incoherent processing, on the normal
// and the FlashAttention-3 outlier recipes.
//
// Large n: the forward is evaluated on whole query tiles (by default one, 128 rows, at a seeded random
// place; with more, the last is the final tile) so that the tiled emulator computes only those tiles; the
// reference and the baseline compute the same rows. RMSE over those rows estimates the RMSE over all rows
// (every row is statistically alike in these non-causal problems). The backward needs every row for dK and
// dV: it runs at n <= 1024 by default.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/precision.hpp"
#include "numerics/fp8_quantization.hpp"
#include "numerics/fp8_variants.hpp"
#include "numerics/input_families.hpp"

namespace fl::numerics {

// Every variant alone, then the combinations that pair a score-side with a value-side improvement.
std::vector<Fp8Variants> default_fp8_study_variants();

struct Fp8StudyOptions {
  std::vector<int> head_dims = {64, 128, 256};
  std::vector<int> seqlens = {512, 1024, 2048, 4096, 8192, 16384};
  std::vector<InputFamily> recipes = {InputFamily::normal, InputFamily::fa3_outliers};
  std::vector<int> backward_seqlens = {512, 1024};
  std::vector<int> backward_head_dims = {128};
  int tile = 128;              // kBlockM = kBlockN of the tiled emulator, and the per-block scaling block
  int sampled_tiles = 1;       // query tiles evaluated when n is larger than full_rows_limit
  int full_rows_limit = 1024;  // up to this n every row is evaluated
  // Forward only: FlashAttention-3's recipe (e4m3, per-block, incoherent) once more with each of these
  // variant sets (numerics/fp8_variants.hpp) on the same inputs and rows; fa3 itself is the plain row.
  std::vector<Fp8Variants> fp8_variants = default_fp8_study_variants();
  std::uint64_t seed = 1;
  int threads = 0;
};

struct Fp8StudyRow {
  std::string pass;    // "forward" or "backward"
  std::string method;  // "baseline" (standard attention) or "tiled" (FlashAttention emulator)
  common::Precision precision = common::Precision::fp16;
  common::Fp8Scaling scaling = common::Fp8Scaling::per_tensor;  // FP8 only
  bool incoherent = false;                                      // FP8 only
  Fp8Variants fp8_variants;                                     // FP8 only; empty: FlashAttention-3's recipe
  InputFamily recipe = InputFamily::normal;
  int head_dim = 0;
  int seqlen = 0;
  std::size_t rows = 0;  // query rows the RMSE is taken over
  double o_rmse = 0.0, o_rel = 0.0;
  double dq_rmse = 0.0, dk_rmse = 0.0, dv_rmse = 0.0;
  double seconds = 0.0;

  std::string label()
      const;  // "fp8_e4m3 per_block incoherent", "fp16", "fp8_e4m3 per_block incoherent two_term_p"
};

std::vector<Fp8StudyRow> run_fp8_study(Fp8StudyOptions const& options,
                                       std::function<void(Fp8StudyRow const&)> const& progress = {});

}  // namespace fl::numerics
