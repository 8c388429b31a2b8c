#pragma once
// Float64 models of the catalogued bugs, for outputs of any implementation.
//
// The emulator (numerics/emulator/) reproduces a bug to the last bit when it walks the problem as the
// implementation did; another implementation's tiles, key order, exp2 or split-KV move a block-dependent bug
// (unrescaled-o/-l, stale-max, normalize-in-loop) far more than its rounding. These models compute each bug
// exactly in float64 from per-block statistics of one row (the block's max, sum of weights and weighted sum
// of V), over every block size from 8 to 256 in steps of 8 (plus the powers of two and fa-check --block-n),
// both key orders and one or two split-KV chunks combined through their LSE. What a model leaves out is the
// implementation's own rounding, which the "far better" rule (match_error.hpp) is built to absorb.
//
// Backward: P, dP and D in float64 give dQ, dK, dV under bwd-missing-delta (dS = P dP), bwd-dk-missing-scale
// (dK / scale), bwd-p-without-l (P l, the unnormalised weights) and bwd-dq-overwrite (dQ from the last key
// block visited only, for every block size, query tile and order) exactly: which gradients fail and how.
#include <cstddef>
#include <string>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/check.hpp"
#include "numerics/diagnosis/match_error.hpp"
#include "numerics/mutants/catalogue.hpp"

namespace fl::numerics::diagnosis {

// Work cap (multiply-adds) above which the models decline: the backward needs every score of a head.
inline constexpr double kMaxModelWork = 4e9;

struct ModelOptions {
  std::vector<int> extra_block_sizes;  // fa-check --block-n
  int threads = 0;
  // Where a model that declines (over kMaxModelWork) says so, with the work it would need; may be null.
  std::vector<std::string>* declined = nullptr;
};

// The line a model or hypothesis that declines leaves in the check's notes: "diagnosis: WHAT not tried: the
// problem needs about N multiply-adds, above its cap of CAP; ADVICE".
std::string declined_note(std::string const& what, double work, double cap, std::string const& advice);

// Named bugs, best first, from O and LSE on the compared rows (forward) or from dQ, dK, dV (backward, when
// the observation has gradients and its forward rows pass).
std::vector<fl::numerics::DiagnosisEntry> model_forward_bugs(
    AttentionInputs const& in, AttentionOutputs const& observed,
    std::vector<std::size_t> const& failing_query_rows, ModelOptions const& options);
std::vector<fl::numerics::DiagnosisEntry> model_backward_bugs(AttentionInputs const& in,
                                                              AttentionOutputs const& observed,
                                                              ModelOptions const& options);

// The catalogued bugs these models express (the emulator search need not try them again).
std::vector<mutants::MutantId> modelled_bugs();

// The block sizes the forward models try: 8..256 in steps of 8, the powers of two from 16, and extras.
std::vector<int> model_block_sizes(std::vector<int> const& extra);

}  // namespace fl::numerics::diagnosis
