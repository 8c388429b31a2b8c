#include "numerics/check.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <sstream>

#include "numerics/check_baseline.hpp"
#include "numerics/check_sample.hpp"
#include "numerics/check_worst_rows.hpp"

namespace fl::numerics {

namespace {

constexpr std::size_t kMaxDiagnosedRowProperties = 64;

// A stoppable forward check is prepared in this many slices of its query rows (at least kMinSliceRows
// each): a signal waits for at most one slice (~1/16 of the check) before the rows finished are judged.
// Each slice pays the per-call setup of the three passes and a join of the workers: 64 slices cost +12%
// CPU and, on two loaded cores, +60% wall time on an 8192-row check (2026-12-01); 16 cost 3-6% CPU.
constexpr std::size_t kStopSlices = 16;
constexpr std::size_t kMinSliceRows = 256;

// Appends the query rows of `slice` (a later slice of the same sample) to `into`.
void append_query_rows(SampledOutputs& into, SampledOutputs const& slice) {
  auto append = [](std::vector<double>& to, std::vector<double> const& from) {
    to.insert(to.end(), from.begin(), from.end());
  };
  append(into.o, slice.o);
  append(into.lse, slice.lse);
  append(into.delta, slice.delta);
  append(into.dq, slice.dq);
  into.sample.query_rows.insert(into.sample.query_rows.end(), slice.sample.query_rows.begin(),
                                slice.sample.query_rows.end());
}

void append_query_rows(ElementBounds& into, ElementBounds const& slice) {
  for (auto [to, from] : {std::pair{&into.o, &slice.o}, {&into.lse, &slice.lse}, {&into.dq, &slice.dq}})
    to->insert(to->end(), from->begin(), from->end());
}

}  // namespace

std::string causal_convention(common::AttentionShape const& s) {
  if (!s.causal) return "non-causal (every query sees every key)";
  std::ostringstream out;
  if (s.causal_top_left)
    out << "causal, top-left aligned (--causal-align top-left, PyTorch's is_causal=True): query i sees key j "
           "when j <= i";
  else
    out << "causal, bottom-right aligned: query i sees key j when j <= i + (N_k - N_q) = i + "
        << s.causal_offset();
  if (s.causal_offset() < 0)
    out << "; query rows 0.." << -s.causal_offset() - 1 << " see no key (O = 0, LSE = -inf)";
  return out.str();
}

PreparedCheck::PreparedCheck(AttentionInputs inputs, CheckOptions options)
    : PreparedCheck(std::make_shared<AttentionInputs const>(std::move(inputs)), std::move(options), nullptr) {
}

PreparedCheck::PreparedCheck(std::shared_ptr<AttentionInputs const> inputs, CheckOptions options,
                             AttentionOutputs const* screen)
    : inputs_(std::move(inputs)), options_(std::move(options)) {
  AttentionInputs const& in = *inputs_;
  recipe_ = options_.use_custom_recipe ? options_.recipe : recipe_for(options_.claimed);
  inputs_exact_ = !is_fp8(recipe_.claimed) && inputs_representable(in, recipe_.operands);
  sampled_ = !checks_every_row(in.shape, options_.force_full, options_.sample_rows);
  RowSample sample = sampled_ ? base_sample(in.shape, in.has_backward(), options_.sample_rows,
                                            options_.sample_key_rows, options_.sample_seed)
                              : RowSample::all(in.shape, in.has_backward());
  if (sampled_ && screen) {  // one check of one output (run_check): its screened rows are known already
    add_rows(sample.query_rows, screened_query_rows(in, *screen, recipe_, options_.threads));
    if (in.has_backward()) add_rows(sample.key_rows, nonfinite_key_rows(in.shape, *screen, options_.threads));
  }
  basis_ = basis_for(std::move(sample));
}

PreparedCheck::Basis PreparedCheck::basis_for(RowSample sample) const {
  AttentionInputs const& in = *inputs_;
  if (options_.stop_requested && !in.has_backward()) return sliced_basis_for(std::move(sample));
  Basis b;
  b.reference = reference_sampled(in, sample, {options_.threads, options_.row_statistics.get()});
  ToleranceOptions tol;
  tol.kappa = options_.kappa;
  tol.inputs_exact = inputs_exact_;
  tol.threads = options_.threads;
  tol.approximate_unsampled_row_stats = sampled_ && in.has_backward();
  tol.reference = &b.reference;
  b.bounds = tolerance_bounds(in, b.reference.sample, recipe_, tol);
  b.planned_query_rows = b.reference.sample.query_rows.size();
  if (options_.cross_check_baseline)
    b.baseline = cross_check_baseline(
        baseline_outputs(in, recipe_, sampled_, b.reference.sample, options_.threads), b.reference, b.bounds);
  return b;
}

// Forward query rows are independent in the reference, the bounds and the baseline, so the sample computed
// slice by slice gives the same values as in one piece, and a signal between slices leaves whole rows.
PreparedCheck::Basis PreparedCheck::sliced_basis_for(RowSample sample) const {
  AttentionInputs const& in = *inputs_;
  std::vector<std::size_t>& rows = sample.query_rows;
  sort_unique(rows);
  std::size_t const slice = std::max(kMinSliceRows, (rows.size() + kStopSlices - 1) / kStopSlices);
  Basis b;
  b.planned_query_rows = rows.size();
  SampledOutputs base;
  ToleranceOptions tol;
  tol.kappa = options_.kappa;
  tol.inputs_exact = inputs_exact_;
  tol.threads = options_.threads;
  // The first slice always runs, so an interrupted check has rows to judge; then the signal is asked
  // before each further slice.
  for (std::size_t begin = 0; begin < rows.size(); begin += slice) {
    if (begin > 0 && (b.stop_signal = options_.stop_requested()) != 0) break;
    RowSample part;
    part.query_rows.assign(rows.begin() + std::ptrdiff_t(begin),
                           rows.begin() + std::ptrdiff_t(std::min(rows.size(), begin + slice)));
    SampledOutputs const reference = reference_sampled(in, part, {options_.threads});
    tol.reference = &reference;
    append_query_rows(b.bounds, tolerance_bounds(in, part, recipe_, tol));
    if (options_.cross_check_baseline)
      append_query_rows(base, baseline_outputs(in, recipe_, sampled_, part, options_.threads));
    append_query_rows(b.reference, reference);
  }
  if (options_.cross_check_baseline) b.baseline = cross_check_baseline(base, b.reference, b.bounds);
  return b;
}

CheckResult PreparedCheck::judge(AttentionOutputs const& observed, Diagnoser const& diagnoser) const {
  AttentionInputs const& inputs = *inputs_;
  common::AttentionShape const& s = inputs.shape;
  CheckResult r;
  // The screen of every row: a flagged row outside the prepared sample gets a basis of its own (the
  // reference and bounds on the larger sample), so the verdict is the one a fresh check would give.
  std::optional<Basis> extended;
  if (sampled_ && !basis_.stop_signal) {  // a sample cut by a signal is judged as it is
    std::vector<std::size_t> const screened =
        screened_query_rows(inputs, observed, recipe_, options_.threads);
    std::vector<std::size_t> const bad_keys = inputs.has_backward()
                                                  ? nonfinite_key_rows(s, observed, options_.threads)
                                                  : std::vector<std::size_t>{};
    r.screened_rows = screened.size();
    auto const covered = [](std::vector<std::size_t> const& rows, std::vector<std::size_t> const& sorted) {
      return std::all_of(rows.begin(), rows.end(), [&](std::size_t row) {
        return std::binary_search(sorted.begin(), sorted.end(), row);
      });
    };
    if (!covered(screened, basis_.reference.sample.query_rows) ||
        !covered(bad_keys, basis_.reference.sample.key_rows)) {
      RowSample sample = basis_.reference.sample;
      add_rows(sample.query_rows, screened);
      add_rows(sample.key_rows, bad_keys);
      extended = basis_for(std::move(sample));
      ++resampled_;
    }
  }
  Basis const& basis = extended ? *extended : basis_;
  r.recipe = recipe_;
  r.sampled = sampled_;
  r.inputs_exact = inputs_exact_;
  r.causal_convention = causal_convention(s);
  r.total_query_rows = query_rows(s);
  r.total_key_rows = inputs.has_backward() ? key_rows(s) : 0;
  if (!r.inputs_exact && !is_fp8(r.recipe.claimed))
    r.notes.push_back(std::string("inputs are not all representable in ") +
                      std::string(name(r.recipe.claimed)) +
                      ": the bound includes the kernel's own rounding of Q, K, V, dO");
  if (is_fp8(r.recipe.claimed))
    r.notes.push_back(
        "FP8: the bound allows FP8 quantisation of Q, K, V, dO with any per-tensor or per-block "
        "scaling, with or without incoherent processing; P with FlashAttention-3's 2^8 offset; O, dQ, "
        "dK, dV written in bf16");
  r.reference = basis.reference;
  r.bounds = basis.bounds;
  r.approximate_key_stats = sampled_ && inputs.has_backward();
  if (r.approximate_key_stats)
    r.notes.push_back(
        "dK/dV bounds on sampled key rows use, for unsampled query rows, the largest LSE and D "
        "variances of the sampled rows of the same head (a heuristic that keeps the check fast)");
  r.judgement = fl::numerics::judge(s, r.reference, r.bounds, observed);
  r.pass = r.judgement.pass;
  r.checked_query_rows = r.reference.sample.query_rows.size();
  r.checked_key_rows = r.reference.sample.key_rows.size();
  if (r.sampled)
    r.notes.push_back("sampled: " + std::to_string(r.checked_query_rows) + " of " +
                      std::to_string(r.total_query_rows) + " query rows (" + std::to_string(r.screened_rows) +
                      " flagged by the screen of every row: non-finite, or O outside the range of V)" +
                      (inputs.has_backward() ? ", " + std::to_string(r.checked_key_rows) + " of " +
                                                   std::to_string(r.total_key_rows) + " key rows"
                                             : std::string()));
  r.stop_signal = basis.stop_signal;
  r.rows_cut_by_stop = basis.stop_signal != 0;
  if (r.rows_cut_by_stop)
    r.notes.push_back(
        "interrupted: " + std::to_string(r.checked_query_rows) + " of the " +
        std::to_string(basis.planned_query_rows) +
        " query rows planned were checked before the signal; the verdict covers those rows only");
  collect_worst_rows(inputs, options_, r);
  r.baseline = basis.baseline;
  if (r.baseline.done)
    for (std::size_t k = 0; k < r.baseline.above_bound.size(); ++k)
      if (r.baseline.above_bound[k] > 0)
        r.notes.push_back("warning: standard attention in the same precision exceeds the bound on " +
                          std::to_string(r.baseline.above_bound[k]) + " elements of " +
                          r.judgement.outputs[k].name +
                          ": the tolerance model may be too tight for these inputs");
  if (!r.interrupted() && options_.stop_requested) r.stop_signal = options_.stop_requested();
  if (!r.pass && diagnoser && r.interrupted())
    r.notes.push_back("interrupted: the diagnosis was not run (rerun without the signal to name the bug)");
  if (!r.pass && diagnoser && !r.interrupted()) {
    std::vector<RowProperties> props;
    for (std::size_t row : r.judgement.failing_query_rows) {
      if (props.size() >= kMaxDiagnosedRowProperties) break;
      props.push_back(row_properties(inputs, row));
    }
    DiagnosisRequest const request{
        inputs, observed, r.recipe, r.reference, r.judgement.failing_query_rows, r.judgement.failing_key_rows,
        props,  &r.notes};
    r.diagnosis = diagnoser(request);
    std::sort(r.diagnosis.begin(), r.diagnosis.end(),
              [](DiagnosisEntry const& a, DiagnosisEntry const& b) { return a.match_error < b.match_error; });
  }
  return r;
}

CheckResult run_check(AttentionInputs const& inputs, AttentionOutputs const& observed,
                      CheckOptions const& options, Diagnoser const& diagnoser) {
  // Not owned: the prepared check lives only for this call, and the inputs may be large (fa-check).
  std::shared_ptr<AttentionInputs const> const borrowed(std::shared_ptr<void>(), &inputs);
  return PreparedCheck(borrowed, options, &observed).judge(observed, diagnoser);
}

}  // namespace fl::numerics
