#pragma once
// One query row's step of the FlashAttention-2 online softmax: one key block's scores folded into the row's
// running max m, sum l and unnormalised accumulator. The emulator's FA-2 loop (forward_fa2.cpp) and the
// row trace behind fa-explain (row_trace.hpp) call this one function, so the trace a user reads is the
// arithmetic, and the mutant switches, that the verifier runs.
#include <cstddef>

#include "numerics/emulator/tile_primitives.hpp"

namespace fl::numerics::emulator {

// The V rows of one key block: row j of the block at v + j * D with descale v_descale[j]; columns at or past
// valid_keys are padding (zero V in shared memory: they add nothing to the accumulator).
struct KeyBlockValues {
  float const* v = nullptr;
  float const* v_descale = nullptr;
  int valid_keys = 0;
};

// What one step did: the max before and after, and alpha = exp(m_old - m_new), the factor the old l and
// accumulator were multiplied by (0 in a row's first block: exp(-inf - m) with m finite).
template <class Real>
struct RowFoldStep {
  Real m_old = 0;
  Real m_new = 0;
  Real alpha = 0;
};

// Folds columns [col_begin, col_end) of one row's scores srow (masked with -inf) into (m, l, acc[0..D)).
// p: scratch of at least col_end values. Instantiated for float (the emulator) and double (fa-explain's
// --precision fp64), see tile_primitives.hpp.
template <class Real>
RowFoldStep<Real> fold_row(Real const* srow, int col_begin, int col_end, KeyBlockValues const& values,
                           std::size_t head_dim, BasicSoftmaxConstants<Real> const& c, MutantSet mutants,
                           Real& m, Real& l, Real* acc, Real* p);

// Whether the accumulator already holds O (normalize-in-loop divides it by l after every block), so that
// the epilogue, and anyone reading O so far, must not divide again.
inline bool accumulator_is_normalised(MutantSet mutants) {
  return mutants.on(MutantId::normalize_in_loop);
}

}  // namespace fl::numerics::emulator
