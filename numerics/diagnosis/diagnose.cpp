#include "numerics/diagnosis/diagnose.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "numerics/diagnosis/failing_row_properties.hpp"
#include "numerics/quantized_operands.hpp"

namespace fl::numerics::diagnosis {

namespace {

using emulator::EmulatorConfig;
using emulator::LoopOrder;
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
  Precision claimed;
  bool backward;
  std::vector<std::size_t> compared_rows;   // forward: failing rows plus a sample of passing rows
  std::vector<std::uint8_t> row_selection;  // forward: one flag per query row
};

std::vector<std::size_t> rows_to_compare(std::size_t total, std::vector<std::size_t> failing) {
  std::sort(failing.begin(), failing.end());
  failing.erase(std::unique(failing.begin(), failing.end()), failing.end());
  std::vector<std::size_t> rows = failing;
  std::size_t const step = std::max<std::size_t>(1, total / kPassingRowsCompared);
  for (std::size_t r = step / 2; r < total; r += step)
    if (!std::binary_search(failing.begin(), failing.end(), r)) rows.push_back(r);
  std::sort(rows.begin(), rows.end());
  return rows;
}

MatchError match_candidate(Workbench const& w, std::optional<MutantId> mutant, LoopOrder order,
                           TileConfig tiles) {
  EmulatorConfig config;
  config.precision = w.claimed;
  config.tiles = tiles;
  config.loop_order = order;
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

// Closest match over the candidate kBlockN at a fixed kBlockM.
CandidateResult best_over_block_n(Workbench const& w, std::optional<MutantId> mutant, LoopOrder order,
                                  int block_m) {
  CandidateResult best{mutant, order, {}, {}};
  bool first = true;
  for (int block_n : w.options.block_n_candidates) {
    TileConfig const tiles{block_m, block_n};
    MatchError const error = match_candidate(w, mutant, order, tiles);
    if (first || error < best.error) best = {mutant, order, tiles, error};
    first = false;
  }
  return best;
}

void refine_block_m(Workbench const& w, CandidateResult& candidate) {
  for (int block_m : w.options.block_m_candidates) {
    if (block_m == candidate.tiles.block_m) continue;
    TileConfig const tiles{block_m, candidate.tiles.block_n};
    MatchError const error = match_candidate(w, candidate.mutant, candidate.loop_order, tiles);
    if (error < candidate.error) candidate = {candidate.mutant, candidate.loop_order, tiles, error};
  }
}

bool by_error(CandidateResult const& a, CandidateResult const& b) {
  return a.error < b.error;
}

// One loop order: the correct algorithm and every mutant over kBlockN, then kBlockM for the closest few.
std::vector<CandidateResult> search(Workbench const& w, std::vector<MutantId> const& mutants, LoopOrder order,
                                    int block_m, CandidateResult& correct) {
  correct = best_over_block_n(w, std::nullopt, order, block_m);
  std::vector<CandidateResult> found;
  for (MutantId id : mutants) found.push_back(best_over_block_n(w, id, order, block_m));
  std::sort(found.begin(), found.end(), by_error);
  for (std::size_t i = 0; i < found.size() && i < kStageTwoCandidates; ++i) refine_block_m(w, found[i]);
  std::stable_sort(found.begin(), found.end(), by_error);
  return found;
}

double estimated_work(AttentionInputs const& in, std::size_t compared_rows, bool backward, std::size_t runs) {
  AttentionShape const& s = in.shape;
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
      << " (worst row, relative to a typical row) in "
      << (named.loop_order == LoopOrder::fa1 ? "FA-1" : "FA-2") << " order at kBlockM " << named.tiles.block_m
      << ", kBlockN " << named.tiles.block_n << "; the correct algorithm misses by "
      << format_error(correct.error);
  if (!shared.empty()) out << "; failing rows share: " << shared;
  return out.str();
}

}  // namespace

std::vector<MutantId> candidate_mutants(Precision claimed, bool backward) {
  std::vector<MutantId> out;
  for (auto const& m : mutants::kCatalogue) {
    if (!mutants::cpu_applicable(m.id)) continue;
    if (m.kind == mutants::MutantKind::bwd && !backward) continue;
    if (m.kind == mutants::MutantKind::fp8 && !is_fp8(claimed)) continue;
    out.push_back(m.id);
  }
  return out;
}

std::vector<std::string> Diagnosis::ids() const {
  std::vector<std::string> out;
  for (auto const& e : entries) out.push_back(e.id);
  return out;
}

std::string Diagnosis::summary() const {
  if (!declined.empty()) return "not diagnosed: " + declined;
  if (entries.empty()) return "no known signature";
  std::string out;
  for (auto const& e : entries) out += (out.empty() ? "" : ", ") + e.id;
  return out;
}

Diagnosis diagnose(AttentionInputs const& in, AttentionOutputs const& observed, Precision claimed,
                   FailingRows const& failing, DiagnosisOptions const& options) {
  if (observed.o.size() != in.shape.q_elements())
    throw std::invalid_argument("diagnosis needs the observed O of the inputs' shape");
  Diagnosis result;
  result.backward = failing.forward.empty() && in.has_backward() &&
                    (!observed.dq.empty() || !observed.dk.empty() || !observed.dv.empty());
  PrecisionRecipe const recipe = recipe_for(claimed);
  Workbench w{in, observed, recipe, quantize_operands(in, recipe), options, claimed, result.backward, {}, {}};
  if (!w.backward) {
    w.compared_rows = rows_to_compare(query_rows(in.shape), failing.forward);
    w.row_selection.assign(query_rows(in.shape), 0);
    for (std::size_t r : w.compared_rows) w.row_selection[r] = 1;
  }
  std::vector<MutantId> const mutants = candidate_mutants(claimed, w.backward);
  std::size_t const runs = ((mutants.size() + 1) * options.block_n_candidates.size() +
                            kStageTwoCandidates * options.block_m_candidates.size()) *
                           std::max<std::size_t>(1, options.loop_orders.size());
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
  std::vector<CandidateResult> found;
  for (LoopOrder order : options.loop_orders) {
    CandidateResult correct;
    std::vector<CandidateResult> pass = search(w, mutants, order, block_m, correct);
    bool const names_one = !pass.empty() && far_better(pass.front().error, correct.error);
    if (found.empty() || names_one) {
      result.correct = correct;
      found = std::move(pass);
    }
    if (names_one) break;
  }
  result.candidates = found;

  FailingRowSummary const rows = summarise_failing_rows(in, failing, w.backward);
  int const shared_block_n = found.empty() ? result.correct.tiles.block_n : found.front().tiles.block_n;
  result.shared_properties =
      rows.shared(shared_block_n, found.empty() ? block_m : found.front().tiles.block_m);
  for (auto const& candidate : found) {
    if (!far_better(candidate.error, result.correct.error)) continue;
    std::string const shared = rows.shared(candidate.tiles.block_n, candidate.tiles.block_m);
    result.entries.push_back({std::string(mutants::info(*candidate.mutant).name),
                              evidence_for(candidate, result.correct, shared),
                              candidate.error.worst_row_error, candidate.error.mismatched_rows,
                              candidate.loop_order, candidate.tiles});
  }
  return result;
}

}  // namespace fl::numerics::diagnosis
