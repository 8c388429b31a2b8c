#include "numerics/diagnosis/emulator_search.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

#include "numerics/diagnosis/failing_row_properties.hpp"
#include "numerics/quantized_operands.hpp"

namespace fl::numerics::diagnosis {

namespace {

using emulator::EmulatorConfig;
using emulator::TileConfig;
using mutants::MutantId;
using mutants::MutantSet;

// Everything one candidate run needs that does not change between candidates.
struct Workbench {
  AttentionInputs const& in;
  AttentionOutputs const& observed;
  PrecisionRecipe recipe;
  QuantizedOperands ops;
  DiagnosisOptions const& options;
  common::Precision claimed;
  bool backward;
  std::vector<std::size_t> compared_rows;   // forward: failing rows plus a sample of passing rows
  std::vector<std::uint8_t> row_selection;  // forward: one flag per query row
};

MatchError match_candidate(Workbench const& w, std::optional<MutantId> mutant, Walk const& walk,
                           TileConfig tiles) {
  EmulatorConfig config;
  config.precision = w.claimed;
  config.tiles = tiles;
  config.loop_order = walk.loop_order;
  config.key_order = walk.key_order;
  config.warps_n = walk.warps_n;
  config.mutants = mutant ? MutantSet::only(*mutant) : MutantSet::none();
  config.threads = w.options.threads;
  auto const d = static_cast<std::size_t>(w.in.shape.head_dim);
  if (!w.backward) {
    auto const forward = emulator::emulate_forward(w.ops, w.recipe, config, w.row_selection);
    MatchError error = match_rows(w.observed.o, forward.o, d, w.compared_rows, false);
    if (!w.observed.lse.empty())
      error = combine(error, match_rows(w.observed.lse, forward.lse, 1, w.compared_rows, true));
    return error;
  }
  auto const forward = emulator::emulate_forward(w.ops, w.recipe, config);
  auto const backward = emulator::emulate_backward(w.ops, w.recipe, forward, config);
  auto const grads = emulator::to_attention_outputs(forward, &backward, &w.ops);
  auto narrow = [](std::vector<double> const& x) { return std::vector<float>(x.begin(), x.end()); };
  MatchError error;
  if (!w.observed.dq.empty())
    error = combine(error, match_rows(w.observed.dq, narrow(grads.dq), d, {}, false));
  if (!w.observed.dk.empty())
    error = combine(error, match_rows(w.observed.dk, narrow(grads.dk), d, {}, false));
  if (!w.observed.dv.empty())
    error = combine(error, match_rows(w.observed.dv, narrow(grads.dv), d, {}, false));
  return error;
}

// A walk that splits key blocks among warp columns runs only the tiles it divides.
bool walk_fits(Walk const& walk, int block_n) {
  return walk.warps_n >= 1 && block_n % walk.warps_n == 0;
}

// Closest match over the candidate kBlockN at a fixed kBlockM.
CandidateResult best_over_block_n(Workbench const& w, std::optional<MutantId> mutant, Walk const& walk,
                                  int block_m) {
  CandidateResult best{mutant, walk, {}, {}};
  bool first = true;
  for (int block_n : w.options.block_n_candidates) {
    if (!walk_fits(walk, block_n)) continue;
    TileConfig const tiles{block_m, block_n};
    MatchError const error = match_candidate(w, mutant, walk, tiles);
    if (first || error < best.error) best = {mutant, walk, tiles, error};
    first = false;
  }
  if (first) best.error.mismatched_rows = std::numeric_limits<std::size_t>::max();  // no tile fits
  return best;
}

void refine_block_m(Workbench const& w, CandidateResult& candidate) {
  for (int block_m : w.options.block_m_candidates) {
    if (block_m == candidate.tiles.block_m) continue;
    TileConfig const tiles{block_m, candidate.tiles.block_n};
    MatchError const error = match_candidate(w, candidate.mutant, candidate.walk, tiles);
    if (error < candidate.error) candidate = {candidate.mutant, candidate.walk, tiles, error};
  }
}

bool by_error(CandidateResult const& a, CandidateResult const& b) {
  return a.error < b.error;
}

// One loop order: the correct algorithm and every mutant over kBlockN, then kBlockM for the closest few.
std::vector<CandidateResult> search(Workbench const& w, std::vector<MutantId> const& mutants,
                                    Walk const& walk, int block_m, CandidateResult& correct) {
  correct = best_over_block_n(w, std::nullopt, walk, block_m);
  std::vector<CandidateResult> found;
  for (MutantId id : mutants) found.push_back(best_over_block_n(w, id, walk, block_m));
  std::sort(found.begin(), found.end(), by_error);
  // The closest few, and any whose NaN/inf pattern differs from the correct algorithm's: where a tile
  // mixes masked and visible rows depends on kBlockM, so such a candidate may match only at another kBlockM.
  for (std::size_t i = 0; i < found.size(); ++i)
    if (i < kStageTwoCandidates || found[i].error.mismatched_rows != correct.error.mismatched_rows)
      refine_block_m(w, found[i]);
  std::stable_sort(found.begin(), found.end(), by_error);
  return found;
}

double estimated_work(AttentionInputs const& in, std::size_t compared_rows, bool backward, std::size_t runs) {
  common::AttentionShape const& s = in.shape;
  double const per_row = double(s.seqlen_k) * s.head_dim * 2.0;  // scores and P.V
  // Forward runs compute whole query tiles: up to 256 rows around each compared row.
  constexpr double kRowsPerComparedRowBound = 256.0;
  double const forward_rows =
      std::min(double(query_rows(s)), double(compared_rows) * kRowsPerComparedRowBound);
  constexpr double kBackwardFactor = 3.5;  // the backward's five products against the forward's two
  double const per_run =
      backward ? double(query_rows(s)) * per_row * kBackwardFactor : forward_rows * per_row;
  return per_run * double(runs);
}

std::string format_error(MatchError const& e) {
  std::ostringstream out;
  out.precision(2);
  out << std::scientific << e.worst_row_error;
  if (e.mismatched_rows > 0)
    out << " with " << e.mismatched_rows << " rows whose NaN/inf it does not reproduce";
  return out.str();
}

std::string evidence_for(CandidateResult const& named, CandidateResult const& correct,
                         std::string const& shared) {
  std::ostringstream out;
  out << "reproduces the observation to " << format_error(named.error)
      << " (worst row, relative to a typical row) in " << describe(named.walk) << " at kBlockM "
      << named.tiles.block_m << ", kBlockN " << named.tiles.block_n << "; the correct algorithm misses by "
      << format_error(correct.error);
  if (!shared.empty()) out << "; failing rows share: " << shared;
  return out.str();
}

}  // namespace

Diagnosis diagnose_pass(AttentionInputs const& in, AttentionOutputs const& observed,
                        PrecisionRecipe const& recipe, FailingRows const& failing,
                        DiagnosisOptions const& options, bool backward) {
  common::Precision const claimed = recipe.claimed;
  Diagnosis result;
  result.backward = backward;
  Workbench w{in, observed, recipe, quantize_operands(in, recipe), options, claimed, result.backward, {}, {}};
  if (!w.backward) {
    w.compared_rows = compared_query_rows(query_rows(in.shape), failing.forward);
    w.row_selection.assign(query_rows(in.shape), 0);
    for (std::size_t r : w.compared_rows) w.row_selection[r] = 1;
  }
  std::vector<MutantId> mutants = candidate_mutants(claimed, w.backward);
  std::erase_if(mutants, [&](MutantId id) {
    return std::find(options.excluded.begin(), options.excluded.end(), id) != options.excluded.end();
  });
  if (mutants.empty()) return result;  // nothing left to try
  std::size_t const runs = ((mutants.size() + 1) * options.block_n_candidates.size() +
                            kStageTwoCandidates * options.block_m_candidates.size()) *
                           std::max<std::size_t>(1, options.walks.size());
  if (double const work = estimated_work(in, w.compared_rows.size(), w.backward, runs);
      work > kMaxDiagnosisWork) {
    std::ostringstream why;
    why << "the problem needs about " << work << " multiply-adds over " << runs
        << " emulator runs, above the cap of " << kMaxDiagnosisWork << "; check a smaller problem";
    result.declined = why.str();
    return result;
  }

  int const block_m = std::find(options.block_m_candidates.begin(), options.block_m_candidates.end(),
                                kStageOneBlockM) != options.block_m_candidates.end() ||
                              options.block_m_candidates.empty()
                          ? kStageOneBlockM
                          : options.block_m_candidates.front();
  // Every walk; each candidate (the correct algorithm too) keeps its closest match over all of them, so a
  // mutant is named only when its best walk beats the correct algorithm's best walk.
  std::vector<CandidateResult> found;
  bool first_walk = true;
  for (Walk const& walk : options.walks) {
    CandidateResult correct;
    std::vector<CandidateResult> pass = search(w, mutants, walk, block_m, correct);
    if (first_walk || correct.error < result.correct.error) result.correct = correct;
    for (CandidateResult& candidate : pass) {
      auto same = std::find_if(found.begin(), found.end(),
                               [&](CandidateResult const& f) { return f.mutant == candidate.mutant; });
      if (same == found.end())
        found.push_back(std::move(candidate));
      else if (candidate.error < same->error)
        *same = std::move(candidate);
    }
    first_walk = false;
  }
  std::stable_sort(found.begin(), found.end(), by_error);
  result.candidates = found;

  FailingRowSummary const rows = summarise_failing_rows(in, failing, w.backward);
  int const shared_block_n = found.empty() ? result.correct.tiles.block_n : found.front().tiles.block_n;
  result.shared_properties =
      rows.shared(shared_block_n, found.empty() ? block_m : found.front().tiles.block_m);
  for (auto const& candidate : found) {
    if (!far_better(candidate.error, result.correct.error)) continue;
    std::string const shared = rows.shared(candidate.tiles.block_n, candidate.tiles.block_m);
    result.entries.push_back(
        {std::string(mutants::info(*candidate.mutant).name), evidence_for(candidate, result.correct, shared),
         candidate.error.worst_row_error, candidate.error.mismatched_rows,
         lead_over(candidate.error, result.correct.error), candidate.walk, candidate.tiles});
    result.entries.back().match_error = ranking_error(candidate.error);
  }
  std::stable_sort(result.entries.begin(), result.entries.end(),
                   [](auto const& a, auto const& b) { return a.match_error < b.match_error; });
  return result;
}

}  // namespace fl::numerics::diagnosis
