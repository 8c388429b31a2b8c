#pragma once
// Bugs named by the pattern of the rows they break, not by reproducing their values.
//
// The emulator replay (diagnose.hpp) names a bug when it reproduces the output, which it does only for the
// tiles, walks and rounding it tries: on fa2_fp8 (FP8 quantisation) and fa3_sm90 (192-row query tiles) it
// named nothing for a missing masked-row guard although the pattern is unmistakable. Where the pattern
// identifies the bug for any implementation and precision, it is tested here, before any replay.
//
// masked-row-nan: every failing row is non-finite (NaN/inf in O, NaN in LSE), every other row passes, and the
// non-finite rows are either (a) fully masked rows only (no visible key: causal with N_q > N_k under the
// bottom-right convention; the reference there is O = 0, LSE = -inf), any subset of them, since kernels
// skip a query tile that sees no key at all and which masked rows turn NaN depends on kBlockM; or (b), in
// every head, exactly the rows that see no key of the first key block their query tile visits when key
// blocks are walked last to first (FlashAttention-3's order) at some kBlockM and kBlockN in 8..256 (steps
// of 8): their running max is still -inf when it enters the exponent. Only exp(-inf - (-inf)) = NaN from an
// unguarded running max gives that: a correct kernel writes O = 0 there, and every other catalogued bug
// (m-init-zero included: its l = 0 is guarded in the epilogue) breaks finite rows or none at all.
#include <cstddef>
#include <optional>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/diagnosis/diagnose.hpp"

namespace fl::numerics::diagnosis {

// The entry (id "masked-row-nan", evidence saying why, infinite strength, match error 0) when the failing
// forward rows (flat query rows that failed on O or LSE) show the signature above; nullopt otherwise.
std::optional<DiagnosisEntry> masked_row_nan_signature(AttentionInputs const& in,
                                                       AttentionOutputs const& observed,
                                                       std::vector<std::size_t> const& failing_forward);

}  // namespace fl::numerics::diagnosis
