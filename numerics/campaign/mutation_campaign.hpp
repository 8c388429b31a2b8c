#pragma once
// One fa-mutate campaign: every catalogued mutant, in every requested precision, run over the input
// families until one kills it (the verifier fails its output); the diagnosis must then name it. The correct
// variant runs over every input first (the baseline): a verifier that flags it would make every kill
// meaningless.
//
// Mutation score as Stryker defines it: detected / valid x 100, where detected = killed and valid = killed
// + survived; equivalent and not-applicable mutants are left out of both and listed with their reason.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/campaign/mutant_runner.hpp"
#include "numerics/diagnosis/diagnose.hpp"
#include "numerics/input_families.hpp"
#include "numerics/mutants/catalogue.hpp"

namespace fl::numerics::mutants {

struct Verdict {
  bool pass = true;
  diagnosis::FailingRows failing;
  std::string summary;  // one line: which output failed, how badly
};
// A verifier prepared for one input set (reference and bounds computed once), judging any outputs on it.
using PreparedJudge = std::function<Verdict(AttentionOutputs const&)>;
using JudgeFactory = std::function<PreparedJudge(AttentionInputs const&, common::Precision claimed)>;

enum class MutantStatus { killed, survived, equivalent, not_applicable };
std::string_view status_name(MutantStatus s);

// A failure the campaign saw: the input that killed a mutant, or one the correct variant failed (a false
// positive), with the outputs as the target produced them. fa-mutate --dump-dir writes each to files.
struct FailureRecord {
  std::optional<MutantId> mutant;  // nullopt: the correct variant
  common::Precision precision = common::Precision::bf16;
  std::string input_case;  // InputCase::describe()
  bool causal = false;
  AttentionInputs const* inputs = nullptr;
  AttentionOutputs const* observed = nullptr;
  std::string verdict;      // the verifier's line, or why repeated runs disagree
  std::string config_json;  // MutantRunner::config_json for this run
};
using FailureSink = std::function<void(FailureRecord const&)>;

struct MutantOutcome;

struct CampaignOptions {
  std::vector<common::Precision> precisions{common::Precision::bf16, common::Precision::fp8_e4m3};
  std::vector<InputFamily> families;  // empty: all_input_families()
  std::vector<MutantId> mutants;      // empty: the whole catalogue
  common::AttentionShape shape;       // base shape; families adjust it (masked rows, ragged tail)
  std::vector<bool> causal{false, true};
  std::uint64_t seed = 1;
  diagnosis::DiagnosisOptions diagnosis;
  FailureSink on_failure;  // called for every kill and every false positive; empty: nothing recorded
  // Mutants the runner repeats (races) are first rerun on a normal input of this many queries and keys
  // (0: none), compared bit for bit and never judged: a missing barrier only shows when warps drift
  // apart over many tile reuses, and the campaign's n = 100 problems reuse each tile once or twice.
  int race_seqlen = 0;
  // Asked before each row (a precision's baseline, each mutant): the signal that asks the campaign to stop
  // (SIGINT, SIGTERM), 0 to go on; empty: never stops. The row in flight always finishes, so a stopped
  // campaign holds whole rows only (fa-mutate prints, writes and stores them, then exits 130/143).
  std::function<int()> stop_requested;
  // Called after each finished mutant row (progress on stderr for long GPU campaigns); may be empty.
  std::function<void(MutantOutcome const&, std::size_t done, std::size_t planned)> on_row;
};

struct InputCase {
  InputFamily family = InputFamily::normal;
  bool causal = false;
  std::uint64_t seed = 0;
  std::string describe() const;  // "ragged_tail, non-causal, seed 1"
};

struct MutantOutcome {
  MutantId id{};
  common::Precision precision = common::Precision::bf16;
  MutantStatus status = MutantStatus::survived;
  std::optional<InputCase> killed_by;
  std::string verdict;                 // the verifier's line on the killing input
  std::vector<std::string> diagnosis;  // ids named on the killing input, best first
  std::string evidence;                // evidence of the first name, or why nothing was named
  bool named_correctly = false;        // killed and the diagnosis names this mutant first
  double match_error = 0.0;            // the diagnosis' ranking error of its first name (0 if none)
  std::string reason;                  // not applicable / equivalence argument
};

struct BaselineOutcome {
  common::Precision precision = common::Precision::bf16;
  std::size_t inputs_checked = 0;
  std::vector<std::string> failures;  // "family, causal, seed: summary" of each false positive
};

struct CampaignResult {
  std::string target, family;
  std::vector<BaselineOutcome> baseline;
  std::vector<MutantOutcome> outcomes;
  std::size_t planned_mutants = 0;  // mutant rows per precision the campaign would have run
  std::size_t planned_rows = 0;     // over every precision (precisions x planned_mutants)
  int stop_signal = 0;              // the signal that stopped it before planned_rows (0: it ran to the end)
  bool interrupted() const { return stop_signal != 0; }

  std::size_t count(MutantStatus s) const;
  std::size_t detected() const { return count(MutantStatus::killed); }
  std::size_t valid() const { return count(MutantStatus::killed) + count(MutantStatus::survived); }
  double score() const;  // detected / valid x 100 (100 when nothing is valid)
  std::size_t misnamed() const;
  bool baseline_clean() const;
  // No survivor, every kill named correctly, no false positive on the correct variant, and every row run.
  bool ok() const {
    return !interrupted() && count(MutantStatus::survived) == 0 && misnamed() == 0 && baseline_clean();
  }
};

// A mutant that no input can distinguish from the correct algorithm in this configuration, with the
// argument; nullopt when none is known (then a surviving mutant is a survivor, not an equivalent).
std::optional<std::string> equivalence_argument(MutantId id, std::string const& family,
                                                common::Precision precision);

// The campaign's base shape for a runner's tiles: N_q and N_k raised (never lowered) until every input
// family's shape (family_shape) has N_k >= 2 kBlockN + 1 and N_q >= 2 kBlockM + 1: at least two full key
// blocks and a partial tail, so that a bug that acts when the running max rises between blocks
// (unrescaled-o, unrescaled-l, normalize-in-loop, stale-max) or in the tail can act, and more than one
// query block per head (masked rows mixing with visible ones, dK and dV summed over query blocks).
// fa2_fp8's defaults (kBlockM 128, kBlockN 128 at d = 64) took the n = 100 problems to one key block each,
// where those three survived on the H200 (2026-12-01).
common::AttentionShape campaign_shape(common::AttentionShape base, CampaignTiles tiles,
                                      std::span<InputFamily const> families);

CampaignResult run_campaign(MutantRunner& runner, JudgeFactory const& judge, CampaignOptions const& options);

}  // namespace fl::numerics::mutants
