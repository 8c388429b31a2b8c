#pragma once
// The check behind fa-check: reference (all rows, or a sample that always holds the structurally
// dangerous rows and every row a cheap screen flags), tolerance bounds for the claimed precision,
// per-element verdict, the worst rows with their properties, the cross-check against standard attention
// in the same precision, and, on failure, the differential diagnosis through an optional callback
// (numerics/diagnosis/ plugs the mutant catalogue in there).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/judge.hpp"
#include "numerics/precision_recipe.hpp"
#include "numerics/reference.hpp"
#include "numerics/row_properties.hpp"
#include "numerics/tolerance.hpp"

namespace fl::numerics {

// One named suspect: a catalogued bug, or an interface mistake, whose model reproduces the observed output.
struct DiagnosisEntry {
  std::string id;            // catalogue id ("unrescaled-o") or interface mistake ("causal-top-left")
  std::string evidence;      // one or two lines: what matched, what the failing rows share
  double match_error = 0.0;  // how far the suspect's output is from the observed one (smaller = better)
  std::string kind = "bug";  // "bug" (numerics/mutants catalogue) or "interface"
  std::string fix = {};      // one line: what to change (empty when there is nothing to say beyond the id)
  // How many times closer the suspect reproduces the observation than the correct algorithm does (its
  // worst row against the correct algorithm's worst row); infinite when it reproduces NaN/inf rows the
  // correct algorithm cannot.
  double strength = 0.0;
};

struct DiagnosisRequest {
  AttentionInputs const& inputs;
  AttentionOutputs const& observed;
  PrecisionRecipe const& recipe;
  SampledOutputs const& reference;
  std::vector<std::size_t> const& failing_query_rows;        // flat query rows
  std::vector<std::size_t> const& failing_key_rows;          // flat key rows
  std::vector<RowProperties> const& failing_row_properties;  // of failing_query_rows (at most 64 of them)
  // Where the diagnoser says what it could not try (a model over its work cap): the check's notes, printed
  // and written to the JSON, so that a hypothesis is never skipped silently. May be null.
  std::vector<std::string>* notes = nullptr;
};

using Diagnoser = std::function<std::vector<DiagnosisEntry>(DiagnosisRequest const&)>;

struct CheckOptions {
  common::Precision claimed = common::Precision::bf16;
  PrecisionRecipe recipe;  // recipe_for(claimed) unless use_custom_recipe
  bool use_custom_recipe = false;
  double kappa = kDefaultToleranceSigmas;
  int threads = 0;
  // 0: full reference when the problem is small (B H N_q N_k D <= kFullCheckWork), otherwise this many
  // random query rows plus the structural and screened ones.
  std::size_t sample_rows = 0;
  std::size_t sample_key_rows = 0;  // likewise for dK / dV
  bool force_full = false;
  std::uint64_t sample_seed = 1;
  int report_block_n = 64;  // block size used to describe where a row's maximum sits
  std::size_t worst_rows_listed = 10;
  bool cross_check_baseline = true;
  // LSE and D of every query row, when the caller has them (numerics::gpu::reference_forward_with_statistics:
  // the tuner computes them with the forward a backward kernel reads): a sampled backward check then takes
  // its dK/dV statistics from here instead of a pass of its own over every row of the heads its key rows are
  // in. They must be the reference's own (reference_forward_rows); the values checked are the same bits
  // either way.
  std::shared_ptr<RowStatistics const> row_statistics;
  // fa-check under SIGINT/SIGTERM: the signal that asks the check to stop, 0 to go on (empty: never asked).
  // A forward check then stops at the next slice of query rows (about 1/16 of them; every slice has its
  // reference, bounds and baseline, so it is judged whole) and judges the rows finished; a backward check
  // (dK/dV need every query row's statistics) finishes its rows. Either skips the diagnosis once asked.
  std::function<int()> stop_requested;
};

// The largest problem (B * H_q * N_q * N_k * D) checked on every row by default: about 2 s on two cores.
constexpr double kFullCheckWork = 1.5e9;
constexpr std::size_t kDefaultSampleRows = 256;
constexpr std::size_t kDefaultSampleKeyRows = 64;

struct WorstRow {
  std::string output;   // "O", "LSE", "dQ", "dK", "dV"
  std::size_t row = 0;  // flat query row (O, LSE, dQ) or key row (dK, dV)
  RowIndex index;
  double max_error = 0.0;
  double ratio = 0.0;      // max_error / bound
  std::string properties;  // describe(row_properties) for query rows; position for key rows
};

struct BaselineCrossCheck {
  bool done = false;
  std::vector<ErrorMetrics> metrics;     // per output, like Judgement::outputs (unchecked: count 0)
  std::vector<std::size_t> above_bound;  // per output: baseline elements beyond the bound (should be 0)
  std::vector<double> bound_over_error;  // per output: rms(bound) / rmse(baseline): how loose the bound is
};

struct CheckResult {
  bool pass = true;
  Judgement judgement;
  PrecisionRecipe recipe;
  bool inputs_exact = true;  // inputs representable in the claimed precision
  bool sampled = false;
  bool approximate_key_stats = false;
  std::size_t checked_query_rows = 0, checked_key_rows = 0;
  std::size_t total_query_rows = 0, total_key_rows = 0;
  std::size_t screened_rows = 0;  // rows added to the sample because a cheap screen flagged them
  std::vector<WorstRow> worst_rows;
  BaselineCrossCheck baseline;
  std::vector<DiagnosisEntry> diagnosis;
  std::vector<std::string> notes;
  std::string causal_convention;  // one line, printed in every report
  SampledOutputs reference;       // for reports (per-row errors along the sequence)
  ElementBounds bounds;
  int stop_signal = 0;  // the signal that stopped the check (CheckOptions::stop_requested), 0: it ran whole
  bool interrupted() const { return stop_signal != 0; }
  bool rows_cut_by_stop = false;  // the signal cut the rows checked short (not only the diagnosis)
  // "fail" (a failing element on the rows checked), "incomplete" (none, but the signal cut the rows
  // checked short) or "pass".
  char const* verdict() const { return !pass ? "fail" : rows_cut_by_stop ? "incomplete" : "pass"; }
};

// The check cut where the outputs enter: prepare once, judge many. What depends on the inputs only (the row
// sample without the screened rows, the float64 reference on it, the tolerance bound of every sampled
// element, the same-precision baseline) is computed once; judge() screens the outputs, judges every element
// and lists the worst rows. A screened row outside the prepared sample gets the reference and bounds on the
// larger sample for that call, so every verdict is the one run_check gives (run_check is this class).
// The tuner verifies every candidate of a problem on the same inputs (tuner/tune/reference_cache).
class PreparedCheck {
 public:
  PreparedCheck(AttentionInputs inputs, CheckOptions options);

  CheckResult judge(AttentionOutputs const& observed, Diagnoser const& diagnoser = {}) const;

  AttentionInputs const& inputs() const { return *inputs_; }
  CheckOptions const& options() const { return options_; }
  bool sampled() const { return sampled_; }
  RowSample const& sample() const { return basis_.reference.sample; }
  SampledOutputs const& reference() const { return basis_.reference; }  // on sample()
  // judge() calls whose screen flagged a row outside the prepared sample (each paid a new reference).
  std::size_t resampled() const { return resampled_; }

 private:
  friend CheckResult run_check(AttentionInputs const&, AttentionOutputs const&, CheckOptions const&,
                               Diagnoser const&);
  struct Basis {
    SampledOutputs reference;
    ElementBounds bounds;
    BaselineCrossCheck baseline;
    int stop_signal = 0;                 // the signal that cut the sample short (sliced_basis_for)
    std::size_t planned_query_rows = 0;  // the rows of the sample before the cut
  };
  // `screen`: outputs whose screened rows join the sample from the start (run_check judges one output).
  PreparedCheck(std::shared_ptr<AttentionInputs const> inputs, CheckOptions options,
                AttentionOutputs const* screen);
  Basis basis_for(RowSample sample) const;
  Basis sliced_basis_for(RowSample sample) const;  // forward with stop_requested: stops between slices

  std::shared_ptr<AttentionInputs const> inputs_;
  CheckOptions options_;
  PrecisionRecipe recipe_;
  bool inputs_exact_ = true;
  bool sampled_ = false;
  Basis basis_;
  mutable std::size_t resampled_ = 0;
};

CheckResult run_check(AttentionInputs const& inputs, AttentionOutputs const& observed,
                      CheckOptions const& options, Diagnoser const& diagnoser = {});

// "causal: bottom-right aligned (query i sees key j when j <= i + N_k - N_q)" or "non-causal".
std::string causal_convention(common::AttentionShape const& s);

}  // namespace fl::numerics
