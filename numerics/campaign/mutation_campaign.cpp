#include "numerics/campaign/mutation_campaign.hpp"

#include <algorithm>
#include <cstring>
#include <span>

namespace fl::numerics::mutants {

namespace {

struct PreparedInput {
  InputCase input_case;
  AttentionInputs inputs;
  PreparedJudge judge;
};

std::vector<PreparedInput> prepare_inputs(MutantRunner const& runner, common::Precision precision,
                                          CampaignOptions const& options, JudgeFactory const& judge) {
  std::span<InputFamily const> families = options.families.empty() ? all_input_families() : options.families;
  common::AttentionShape const base =
      campaign_shape(options.shape, runner.largest_tiles(precision, options.shape), families);
  std::vector<PreparedInput> out;
  for (InputFamily family : families)
    for (bool causal : options.causal) {
      // fully_masked_rows is causal by construction: its non-causal case would repeat the causal one.
      if (family == InputFamily::fully_masked_rows && !causal) continue;
      FamilyRequest request;
      request.shape = base;
      request.shape.causal = causal;
      request.seed = options.seed;
      request.precision = precision;
      request.with_backward = true;
      FamilyInputs generated = generate_family(family, request);
      InputCase const input_case{family, generated.inputs.shape.causal, options.seed};
      PreparedJudge prepared = judge(generated.inputs, precision);
      out.push_back({input_case, std::move(generated.inputs), std::move(prepared)});
    }
  return out;
}

bool bitwise_equal(std::vector<double> const& a, std::vector<double> const& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](double x, double y) {
           return std::memcmp(&x, &y, sizeof x) == 0;
         });
}

bool runs_agree(AttentionOutputs const& a, AttentionOutputs const& b) {
  return bitwise_equal(a.o, b.o) && bitwise_equal(a.lse, b.lse) && bitwise_equal(a.dq, b.dq) &&
         bitwise_equal(a.dk, b.dk) && bitwise_equal(a.dv, b.dv);
}

void record_failure(MutantRunner const& runner, CampaignOptions const& options,
                    std::optional<MutantId> mutant, common::Precision precision, PreparedInput const& input,
                    AttentionOutputs const& observed, std::string const& verdict) {
  if (!options.on_failure) return;
  FailureRecord record;
  record.mutant = mutant;
  record.precision = precision;
  record.input_case = input.input_case.describe();
  record.causal = input.input_case.causal;
  record.inputs = &input.inputs;
  record.observed = &observed;
  record.verdict = verdict;
  record.config_json = runner.config_json(mutant, input.inputs.shape, precision);
  options.on_failure(record);
}

// Reruns `first`'s input (repeats(id) - 1 times) until one differs bit for bit: then the outcome is a kill
// by a race (only a race makes identical runs differ) and true is returned.
bool rerun_differs(MutantRunner& runner, AttentionInputs const& inputs, AttentionOutputs const& first,
                   InputCase const& input_case, std::string const& verdict, MutantOutcome& outcome) {
  for (int repeat = 1; repeat < runner.repeats(outcome.id); ++repeat) {
    if (runs_agree(first, runner.run(outcome.id, inputs, outcome.precision))) continue;
    outcome.status = MutantStatus::killed;
    outcome.killed_by = input_case;
    outcome.verdict = verdict;
    outcome.diagnosis = {std::string(info(outcome.id).name)};
    outcome.named_correctly = info(outcome.id).kind == MutantKind::gpu_only;
    outcome.evidence = "run " + std::to_string(repeat + 1) + " differs from run 1";
    return true;
  }
  return false;
}

// The race stress problem (CampaignOptions::race_seqlen): repeated runs that must agree bit for bit.
bool race_shows_under_stress(MutantRunner& runner, CampaignOptions const& options, MutantOutcome& outcome) {
  if (options.race_seqlen <= 0 || runner.repeats(outcome.id) <= 1) return false;
  FamilyRequest request;
  request.shape = options.shape;
  request.shape.seqlen_q = request.shape.seqlen_k = options.race_seqlen;
  request.shape.causal = false;
  request.seed = options.seed;
  request.precision = outcome.precision;
  request.with_backward = true;
  AttentionInputs const stress = generate_family(InputFamily::normal, request).inputs;
  AttentionOutputs const first = runner.run(outcome.id, stress, outcome.precision);
  return rerun_differs(
      runner, stress, first, InputCase{InputFamily::normal, false, options.seed},
      "repeated runs disagree bit for bit (stress problem n = " + std::to_string(options.race_seqlen) + ")",
      outcome);
}

// A race no rerun showed: the target's race tool (racecheck) on it once. A kill is named as the reruns
// name one (only a race gives hazards the correct kernel has not); otherwise the tool's answer (nothing
// found, or why it could not look) becomes the survivor's reason, never silence.
bool race_tool_kills(MutantRunner& runner, CampaignOptions const& options, MutantOutcome& outcome) {
  if (runner.repeats(outcome.id) <= 1) return false;
  std::optional<RaceToolReport> const report =
      runner.race_tool_check(outcome.id, outcome.precision, options.seed);
  if (!report) return false;
  if (!report->kills) {
    outcome.reason = report->verdict;
    return false;
  }
  outcome.status = MutantStatus::killed;
  outcome.killed_by = InputCase{InputFamily::normal, false, options.seed};
  outcome.verdict = report->verdict;
  outcome.diagnosis = {std::string(info(outcome.id).name)};
  outcome.named_correctly = info(outcome.id).kind == MutantKind::gpu_only;
  outcome.evidence = report->evidence;
  return true;
}

void hunt(MutantRunner& runner, std::vector<PreparedInput> const& inputs, CampaignOptions const& options,
          MutantOutcome& outcome) {
  if (race_shows_under_stress(runner, options, outcome)) return;
  for (PreparedInput const& input : inputs) {
    AttentionOutputs const observed = runner.run(outcome.id, input.inputs, outcome.precision);
    if (rerun_differs(runner, input.inputs, observed, input.input_case, "repeated runs disagree bit for bit",
                      outcome)) {
      record_failure(runner, options, outcome.id, outcome.precision, input, observed,
                     outcome.verdict + " (" + outcome.evidence + "; run 1 written)");
      return;
    }
    Verdict const verdict = input.judge(observed);
    if (verdict.pass) continue;
    outcome.status = MutantStatus::killed;
    outcome.killed_by = input.input_case;
    outcome.verdict = verdict.summary;
    record_failure(runner, options, outcome.id, outcome.precision, input, observed, verdict.summary);
    diagnosis::Diagnosis const d =
        diagnosis::diagnose(input.inputs, observed, outcome.precision, verdict.failing, options.diagnosis);
    outcome.diagnosis = d.ids();
    outcome.named_correctly = !d.entries.empty() && d.entries.front().id == info(outcome.id).name;
    outcome.evidence = d.entries.empty() ? d.summary() : d.entries.front().evidence;
    outcome.match_error = d.entries.empty() ? 0.0 : d.entries.front().match_error;
    return;
  }
  if (race_tool_kills(runner, options, outcome)) return;
  outcome.status = MutantStatus::survived;
  if (auto from_target = runner.equivalence_argument(outcome.id, outcome.precision)) {
    outcome.status = MutantStatus::equivalent;
    outcome.reason = *from_target;
  } else if (auto argument = equivalence_argument(outcome.id, runner.family(), outcome.precision)) {
    outcome.status = MutantStatus::equivalent;
    outcome.reason = *argument;
  }
}

}  // namespace

std::string_view status_name(MutantStatus s) {
  switch (s) {
    case MutantStatus::killed:
      return "killed";
    case MutantStatus::survived:
      return "survived";
    case MutantStatus::equivalent:
      return "equivalent";
    case MutantStatus::not_applicable:
      return "not applicable";
  }
  return "unknown";
}

std::string InputCase::describe() const {
  return std::string(name(family)) + (causal ? ", causal" : ", non-causal") + ", seed " +
         std::to_string(seed);
}

std::size_t CampaignResult::count(MutantStatus s) const {
  return static_cast<std::size_t>(
      std::count_if(outcomes.begin(), outcomes.end(), [s](auto const& o) { return o.status == s; }));
}

double CampaignResult::score() const {
  return valid() == 0 ? 100.0 : 100.0 * static_cast<double>(detected()) / static_cast<double>(valid());
}

std::size_t CampaignResult::misnamed() const {
  return static_cast<std::size_t>(std::count_if(outcomes.begin(), outcomes.end(), [](auto const& o) {
    return o.status == MutantStatus::killed && !o.named_correctly;
  }));
}

bool CampaignResult::baseline_clean() const {
  return std::all_of(baseline.begin(), baseline.end(), [](auto const& b) { return b.failures.empty(); });
}

std::optional<std::string> equivalence_argument(MutantId, std::string const&, common::Precision) {
  // No catalogued mutant is equivalent on the CPU families: each changes the output of at least one input
  // family in every precision where it applies (the tests check this). A new mutant that cannot change any
  // output gets its argument here, with the configuration it holds for.
  return std::nullopt;
}

common::AttentionShape campaign_shape(common::AttentionShape base, CampaignTiles tiles,
                                      std::span<InputFamily const> families) {
  auto fits = [&](common::AttentionShape const& s) {
    for (InputFamily family : families) {
      common::AttentionShape const f = family_shape(family, s);
      if (f.seqlen_k < 2 * tiles.block_n + 1 || f.seqlen_q < 2 * tiles.block_m + 1) return false;
    }
    return true;
  };
  // Raise both lengths together (the families derive N_k from N_q or round both), one step at a time:
  // ragged_tail's rounding is not monotone, so the first length that fits is found by walking.
  constexpr int kMaxSeqlen = 1 << 16;
  common::AttentionShape s = base;
  while (!fits(s) && std::max(s.seqlen_q, s.seqlen_k) < kMaxSeqlen) {
    ++s.seqlen_q;
    ++s.seqlen_k;
  }
  return s;
}

CampaignResult run_campaign(MutantRunner& runner, JudgeFactory const& judge, CampaignOptions const& options) {
  CampaignResult result;
  result.target = std::string(runner.target());
  result.family = runner.family();
  std::vector<MutantId> ids = options.mutants;
  if (ids.empty())
    for (auto const& m : kCatalogue) ids.push_back(m.id);
  result.planned_mutants = ids.size();
  result.planned_rows = ids.size() * options.precisions.size();
  auto const stop = [&] {
    if (options.stop_requested && result.stop_signal == 0) result.stop_signal = options.stop_requested();
    return result.stop_signal != 0;
  };
  for (common::Precision precision : options.precisions) {
    if (stop()) break;
    // The diagnosis replays the emulator at candidate tiles: the target's own tiles must be among them
    // (fa3_sm90's 128-row query blocks make a causal row fully masked in its first key block, which no
    // 64-row replay reproduces).
    CampaignOptions with_tiles = options;
    CampaignTiles const tiles = runner.largest_tiles(precision, options.shape);
    auto add_unique = [](std::vector<int>& list, int value) {
      if (value > 0 && std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
    };
    add_unique(with_tiles.diagnosis.block_m_candidates, tiles.block_m);
    add_unique(with_tiles.diagnosis.block_n_candidates, tiles.block_n);
    std::vector<PreparedInput> const inputs = prepare_inputs(runner, precision, with_tiles, judge);
    BaselineOutcome baseline{precision, inputs.size(), {}};
    for (PreparedInput const& input : inputs) {
      AttentionOutputs const observed = runner.run(std::nullopt, input.inputs, precision);
      Verdict const verdict = input.judge(observed);
      if (verdict.pass) continue;
      baseline.failures.push_back(input.input_case.describe() + ": " + verdict.summary);
      record_failure(runner, options, std::nullopt, precision, input, observed, verdict.summary);
    }
    result.baseline.push_back(baseline);
    for (MutantId id : ids) {
      if (stop()) break;
      MutantOutcome outcome;
      outcome.id = id;
      outcome.precision = precision;
      if (auto why = runner.not_applicable(id, precision)) {
        outcome.status = MutantStatus::not_applicable;
        outcome.reason = *why;
      } else if (info(id).kind == MutantKind::bwd && !runner.has_backward(precision)) {
        outcome.status = MutantStatus::not_applicable;
        outcome.reason =
            "the " + runner.family() + " target has no backward at " + std::string(name(precision));
      } else {
        hunt(runner, inputs, with_tiles, outcome);
      }
      result.outcomes.push_back(std::move(outcome));
      if (options.on_row) options.on_row(result.outcomes.back(), result.outcomes.size(), result.planned_rows);
    }
  }
  return result;
}

}  // namespace fl::numerics::mutants
