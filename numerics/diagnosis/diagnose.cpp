#include "numerics/diagnosis/diagnose.hpp"

#include <algorithm>
#include <stdexcept>

#include "numerics/diagnosis/block_models.hpp"
#include "numerics/diagnosis/emulator_search.hpp"
#include "numerics/diagnosis/failure_signatures.hpp"

namespace fl::numerics::diagnosis {

namespace {

using emulator::LoopOrder;
using mutants::MutantId;

}  // namespace

std::vector<std::size_t> compared_query_rows(std::size_t total, std::vector<std::size_t> failing,
                                             std::size_t max_failing) {
  std::sort(failing.begin(), failing.end());
  failing.erase(std::unique(failing.begin(), failing.end()), failing.end());
  std::vector<std::size_t> rows;
  if (failing.size() <= max_failing) {
    rows = failing;
  } else {
    for (std::size_t i = 0; i < max_failing; ++i) rows.push_back(failing[i * failing.size() / max_failing]);
  }
  std::size_t const step = std::max<std::size_t>(1, total / kPassingRowsCompared);
  for (std::size_t r = step / 2; r < total; r += step)
    if (!std::binary_search(failing.begin(), failing.end(), r)) rows.push_back(r);
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::string describe(Walk const& walk) {
  std::string out = walk.loop_order == LoopOrder::fa1 ? "FA-1 order" : "FA-2 order";
  if (walk.loop_order == LoopOrder::fa2) {
    out += walk.key_order == emulator::KeyOrder::last_to_first ? ", key blocks last to first"
                                                               : ", key blocks first to last";
    if (walk.warps_n > 1) out += ", " + std::to_string(walk.warps_n) + " warp columns";
  }
  return out;
}

std::vector<MutantId> candidate_mutants(common::Precision claimed, bool backward) {
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

double ranking_error(MatchError const& e) {
  return e.worst_row_error + static_cast<double>(e.mismatched_rows);
}

Diagnosis diagnose(AttentionInputs const& in, AttentionOutputs const& observed, common::Precision claimed,
                   FailingRows const& failing, DiagnosisOptions const& options) {
  return diagnose(in, observed, recipe_for(claimed), failing, options);
}

namespace {

// `entry` first; a replay that also named its id adds its evidence. The pattern needs no replay, so a
// search over its work cap no longer leaves the output undiagnosed.
void name_first(Diagnosis& d, DiagnosisEntry entry) {
  auto const replayed =
      std::find_if(d.entries.begin(), d.entries.end(), [&](auto const& e) { return e.id == entry.id; });
  if (replayed != d.entries.end()) {
    entry.evidence += "; the emulator replay agrees: " + replayed->evidence;
    entry.walk = replayed->walk;
    entry.tiles = replayed->tiles;
    d.entries.erase(replayed);
  }
  d.entries.insert(d.entries.begin(), std::move(entry));
  d.declined.clear();
}

// The replay reproduces a backward bug only at the tiles it tries, and declines a campaign-sized backward
// (each run computes every query row): bwd-missing-delta went unnamed on fa3_sm90_bwd (64 key rows per
// consumer, query blocks 64/128). The float64 models (backward_models.cpp) compute the catalogued backward
// bugs exactly for any tiles, and say which of dQ, dK, dV the reference misses.
void name_by_backward_models(Diagnosis& d, AttentionInputs const& in, AttentionOutputs const& observed,
                             int threads) {
  for (auto const& e : model_backward_bugs(in, observed, ModelOptions{{}, threads, nullptr})) {
    DiagnosisEntry entry;
    entry.id = e.id;
    entry.evidence = e.evidence;
    entry.match_error = e.match_error;
    entry.strength = e.strength;
    d.entries.push_back(std::move(entry));
  }
  if (!d.entries.empty()) d.declined.clear();
}

}  // namespace

Diagnosis diagnose(AttentionInputs const& in, AttentionOutputs const& observed, PrecisionRecipe const& recipe,
                   FailingRows const& failing, DiagnosisOptions const& options) {
  if (observed.o.size() != in.shape.q_elements())
    throw std::invalid_argument("diagnosis needs the observed O of the inputs' shape");
  bool const has_gradients =
      in.has_backward() && (!observed.dq.empty() || !observed.dk.empty() || !observed.dv.empty());
  // Forward first when forward rows failed: a forward bug also breaks the gradients, and the forward pass
  // is cheaper. When it names nothing (a backward bug leaves O intact), the gradients are tried.
  if (!failing.forward.empty() || !has_gradients) {
    Diagnosis forward = diagnose_pass(in, observed, recipe, failing, options, false);
    // A failure pattern that identifies its bug for any tiles, walk and precision names it first, whether or
    // not a replay reproduced it (failure_signatures.hpp).
    if (auto signature = masked_row_nan_signature(in, observed, failing.forward))
      name_first(forward, std::move(*signature));
    if (!forward.entries.empty() || !has_gradients) return forward;
  }
  Diagnosis backward = diagnose_pass(in, observed, recipe, failing, options, true);
  if (backward.entries.empty()) name_by_backward_models(backward, in, observed, options.threads);
  return backward;
}

}  // namespace fl::numerics::diagnosis