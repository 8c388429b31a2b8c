#pragma once
// Seeded, reproducible inputs, each family exposing one class of online-softmax bug.
//
//   normal              Q, K, V, dO ~ N(0, 1)
//   fa3_outliers        N(0,1) + N(0, 10^2) * Bernoulli(0.001) for Q, K, V (FlashAttention-3's recipe,
//                       variance 100); dO ~ N(0,1)
//   max_in_first_block  planted rows: the maximum score sits in keys 0..15 (the first key block for every
//                       kBlockN >= 16), 8 above every other score, so the running max never rises again
//   max_in_last_block   planted rows: the maximum is the last visible key (the last key block for every
//                       kBlockN), 8 above the others, so the running max rises at the end
//   all_negative        every scaled score below -100 (about -120 or lower): a running max started at 0
//                       underflows every exp
//   huge_dynamic_range  keys scaled by 2^e, e in [-8, 4], values by 2^f, f in [-10, 10]: weights spanning
//                       e^90 and values spanning 2^20 inside one row
//   constant_rows       every even query row is 0: all its scores are exactly equal
//   fully_masked_rows   causal with N_k = N_q - max(1, N_q / 4): under bottom-right alignment query rows
//                       i < N_q - N_k see no key; their right output is O = 0, dQ = 0, LSE = -inf
//   ragged_tail         N_q, N_k = (a multiple of 256, or of 16 below 256) + 1: one key (and query) in a
//                       final partial block for every power-of-two block size; scores between -4 and -8 so
//                       that a padding key scored 0 would outweigh every real key
//   near_dtype_max      |Q|, |K| in [0.5, 1] * min(max, 2^15), |V| in [0.5, 1] * min(max, 2^100) of the
//                       claimed precision, random signs; dO ~ N(0,1) / (max|V| sqrt(d)) so dP stays O(1)
//
// Values are rounded to the precision the kernel consumes (bf16 for FP8 claims: FP8 kernels quantise
// bf16 inputs themselves), so the reference and the kernel see identical numbers.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/input_limits.hpp"
#include "common/precision.hpp"
#include "numerics/attention_tensors.hpp"

namespace fl::numerics {

// The head dims a family draw takes: generate_family refuses fewer than two, and no problem has more than
// common::kHeadDim allows. Commands that draw from a family call it --head-dim.
inline constexpr common::CountRange kFamilyHeadDim{"--head-dim", 2, common::kHeadDim.max,
                                                   "an input family needs 2 or more"};

enum class InputFamily {
  normal,
  fa3_outliers,
  max_in_first_block,
  max_in_last_block,
  all_negative,
  huge_dynamic_range,
  constant_rows,
  fully_masked_rows,
  ragged_tail,
  near_dtype_max,
};

std::span<InputFamily const> all_input_families();
std::string_view name(InputFamily f);
std::optional<InputFamily> parse_input_family(std::string_view text);

struct FamilyRequest {
  common::AttentionShape shape;  // fully_masked_rows and ragged_tail adjust it (see above)
  std::uint64_t seed = 0;
  common::Precision precision = common::Precision::bf16;  // the claimed precision
  bool with_backward = true;                              // generate dO
};

struct FamilyInputs {
  InputFamily family = InputFamily::normal;
  AttentionInputs inputs;
  // Flat query rows carrying the family's property (planted rows, masked rows, tail rows; for families
  // where every row has it, an evenly spread subset of at most kMaxAdversarialRows plus the first and last
  // row of each head). Sorted, unique. A sampled check always includes them.
  std::vector<std::size_t> adversarial_rows;
  std::vector<std::size_t> adversarial_key_rows;  // likewise for dK / dV (planted keys, tail keys, outliers)
};

constexpr std::size_t kMaxAdversarialRows = 256;
// Margin (in scaled-score units) by which a planted maximum exceeds every other score of its row.
constexpr double kPlantedMaxMargin = 8.0;
// Keys 0..kFirstBlockKeys-1 are in the first key block for every kBlockN >= 16.
constexpr int kFirstBlockKeys = 16;

// The shape a family's inputs get from the requested one (fully_masked_rows and ragged_tail adjust it).
common::AttentionShape family_shape(InputFamily family, common::AttentionShape requested);

FamilyInputs generate_family(InputFamily family, FamilyRequest const& request);

}  // namespace fl::numerics
