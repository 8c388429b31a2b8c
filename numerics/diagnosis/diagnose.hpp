#pragma once
// Differential diagnosis: which catalogued bug does a failing output look like?
//
// Each CPU-applicable mutant of the tiled emulator (and the correct algorithm) is re-run on the same inputs
// in the claimed precision over candidate tile sizes; a mutant is named when it reproduces the observed
// output far better than the correct algorithm does (match_error.hpp: kFarBetterRatio). Works on any
// observed output, ours or a .npy file from elsewhere: it needs only the inputs, the observation and which
// rows failed. Evidence for each name: its match error, the tile it matched at, and the properties the
// failing rows share (maximum in a late key block, all scores negative, fully masked, keys ending in the
// tail block).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/precision.hpp"
#include "numerics/attention_tensors.hpp"
#include "numerics/diagnosis/match_error.hpp"
#include "numerics/emulator/emulator.hpp"
#include "numerics/mutants/catalogue.hpp"

namespace fl::numerics::diagnosis {

// The tile sizes FlashAttention kernels use: kBlockN from 16 to 256.
inline constexpr int kDefaultBlockSizes[] = {16, 32, 64, 128, 256};
// Stage 1 fixes kBlockM here (FA-2's usual tile); stage 2 varies it for the closest candidates, since
// kBlockM changes a row's output only through which blocks a tile visits (masked rows, causal skipping).
inline constexpr int kStageOneBlockM = 64;
inline constexpr std::size_t kStageTwoCandidates = 3;
// Passing rows compared besides the failing ones, so that a mutant that matches the failing rows but
// breaks the healthy ones is not named.
inline constexpr std::size_t kPassingRowsCompared = 48;
// Work cap (multiply-adds over all candidate runs) beyond which the diagnosis declines rather than run
// for minutes: about 20 s at the emulator's ~1 G multiply-add/s per core.
inline constexpr double kMaxDiagnosisWork = 2e10;

// How a candidate walks the problem: the loop order, and for FA-2 the key-block order and the warp
// columns a key block is split into (emulator::EmulatorConfig says what each means).
struct Walk {
  emulator::LoopOrder loop_order = emulator::LoopOrder::fa2;
  emulator::KeyOrder key_order = emulator::KeyOrder::first_to_last;
  int warps_n = 1;
  friend bool operator==(Walk const&, Walk const&) = default;
};
std::string describe(Walk const& walk);  // "FA-2 order, key blocks last to first, 2 warp columns"

// The walks tried by default: FA-2 with key blocks first to last (the emulator's and FlashAttention-2's
// order), FA-2 last to first (fa2_sm80's), FA-1. Every walk is tried and each candidate keeps its best:
// the walk that produced an observation reproduces it to rounding, another walk of the same bug does not.
inline std::vector<Walk> default_walks() {
  return {{emulator::LoopOrder::fa2, emulator::KeyOrder::first_to_last, 1},
          {emulator::LoopOrder::fa2, emulator::KeyOrder::last_to_first, 1},
          {emulator::LoopOrder::fa1, emulator::KeyOrder::first_to_last, 1}};
}

struct DiagnosisOptions {
  std::vector<int> block_n_candidates{std::begin(kDefaultBlockSizes), std::end(kDefaultBlockSizes)};
  std::vector<int> block_m_candidates{std::begin(kDefaultBlockSizes), std::end(kDefaultBlockSizes)};
  // Walks tried: most bugs look the same in all of them, but some do not (a missing masked-row guard
  // makes NaN in every tile a row cannot see in FA-1 order, only in fully masked rows in FA-2 order; a
  // missing rescale depends on the order the running max rises in, so on the key-block order).
  std::vector<Walk> walks = default_walks();
  int threads = 0;
  // Mutants left out of the search (fa-check leaves out those its float64 models already tried).
  std::vector<mutants::MutantId> excluded;
};

// Rows that failed the check: flat query rows of O or LSE, of dQ, and flat key rows of dK or dV.
struct FailingRows {
  std::vector<std::size_t> forward;
  std::vector<std::size_t> dq;
  std::vector<std::size_t> key;
};

struct DiagnosisEntry {
  std::string id;        // catalogue id, e.g. "unrescaled-o"
  std::string evidence;  // one line
  double match_error = 0.0;
  std::size_t mismatched_rows = 0;
  double strength = 0.0;  // lead_over the correct algorithm's closest match
  Walk walk;
  emulator::TileConfig tiles;
};

struct CandidateResult {
  std::optional<mutants::MutantId> mutant;  // nullopt: the correct algorithm
  Walk walk;
  emulator::TileConfig tiles;
  MatchError error;
};

struct Diagnosis {
  bool backward = false;                    // diagnosed on dQ/dK/dV (forward outputs passed)
  std::vector<DiagnosisEntry> entries;      // named mutants, best first; empty: no known signature
  CandidateResult correct;                  // the correct algorithm's closest match
  std::vector<CandidateResult> candidates;  // every candidate's closest match, best first
  std::string shared_properties;            // what the failing rows have in common
  std::string declined;                     // non-empty when the diagnosis did not run, and why

  std::vector<std::string> ids() const;
  std::string summary() const;  // "unrescaled-o, stale-max" or "no known signature"
};

// claimed: the precision the implementation claims (its recipe_for). observed.o is required; lse, dq, dk, dv
// are compared when present. The backward is diagnosed when no forward row failed and the observation has
// gradients.
Diagnosis diagnose(AttentionInputs const& in, AttentionOutputs const& observed, common::Precision claimed,
                   FailingRows const& failing, DiagnosisOptions const& options = {});
// The same with the recipe the check used (FP8 per-block scaling, incoherent processing).
Diagnosis diagnose(AttentionInputs const& in, AttentionOutputs const& observed, PrecisionRecipe const& recipe,
                   FailingRows const& failing, DiagnosisOptions const& options = {});

// The query rows a forward diagnosis compares: the failing rows (thinned evenly to at most max_failing) plus
// kPassingRowsCompared evenly spread passing rows, sorted.
std::vector<std::size_t> compared_query_rows(std::size_t total, std::vector<std::size_t> failing,
                                             std::size_t max_failing = static_cast<std::size_t>(-1));

// One number per named entry, the order of Diagnosis::entries: the worst row error plus one per row whose
// NaN/inf the mutant does not reproduce (such a row counts as a row that is 100% off).
double ranking_error(MatchError const& e);

// The candidates `diagnose` tries for a precision: fwd (and bwd for the backward) mutants, fp8 ones for fp8.
std::vector<mutants::MutantId> candidate_mutants(common::Precision claimed, bool backward);

}  // namespace fl::numerics::diagnosis
