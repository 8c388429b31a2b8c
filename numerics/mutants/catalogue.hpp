#pragma once
// The mutant catalogue: every deliberately wrong variant of the online softmax that FlashLab knows,
// with a stable id, the compile-time switch that turns it on, its kind and a one-line description.
//
// This header is the single source of truth for the GPU side as well: kernels_src/ uses the same
// switch names (`#ifdef FA_MUTANT_UNRESCALED_O`) at the line where each bug would live, and the GPU
// runner defines exactly `switch_name` when it asks NVRTC for a mutant. It depends on nothing but
// <array> and <string_view>, so any host code can read the table at compile time.
//
// Ids never change once published (results in SQLite refer to them); new mutants are appended.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace fl::numerics::mutants {

enum class MutantKind : std::uint8_t {
  fwd,       // forward pass bug, reproducible on the CPU emulator
  bwd,       // backward pass bug, reproducible on the CPU emulator
  fp8,       // bug in the FP8 path (descale, P quantisation); needs an fp8 dtype
  gpu_only,  // depends on GPU concurrency; the CPU emulator cannot express it
};

enum class MutantId : std::uint8_t {
  unrescaled_o,
  unrescaled_l,
  m_init_zero,
  normalize_in_loop,
  stale_max,
  missing_scale,
  exp_base_mismatch,
  causal_diagonal,
  masked_row_nan,
  tail_unmasked,
  lse_without_max,
  bwd_missing_delta,
  bwd_dk_missing_scale,
  bwd_dq_overwrite,
  bwd_p_without_l,
  bwd_race,
  fp8_missing_descale,
  fp8_p_overflow,
};

struct MutantInfo {
  MutantId id;
  std::string_view name;         // stable id, kebab-case: "unrescaled-o"
  std::string_view switch_name;  // FA_MUTANT_ + name upper-cased, '-' -> '_'
  MutantKind kind;
  std::string_view description;                // one line
  std::string_view cpu_not_applicable_reason;  // empty when the CPU emulator carries the switch
};

inline constexpr std::array kCatalogue{
    MutantInfo{MutantId::unrescaled_o, "unrescaled-o", "FA_MUTANT_UNRESCALED_O", MutantKind::fwd,
               "O accumulator not multiplied by exp(m_old - m_new) when the running max rises", ""},
    MutantInfo{MutantId::unrescaled_l, "unrescaled-l", "FA_MUTANT_UNRESCALED_L", MutantKind::fwd,
               "row sum l not multiplied by exp(m_old - m_new) when the running max rises", ""},
    MutantInfo{MutantId::m_init_zero, "m-init-zero", "FA_MUTANT_M_INIT_ZERO", MutantKind::fwd,
               "running max starts at 0 instead of -inf", ""},
    MutantInfo{MutantId::normalize_in_loop, "normalize-in-loop", "FA_MUTANT_NORMALIZE_IN_LOOP",
               MutantKind::fwd, "O divided by l after every key block instead of once at the end", ""},
    MutantInfo{MutantId::stale_max, "stale-max", "FA_MUTANT_STALE_MAX", MutantKind::fwd,
               "a block's P computed with the previous running max instead of the updated one", ""},
    MutantInfo{MutantId::missing_scale, "missing-scale", "FA_MUTANT_MISSING_SCALE", MutantKind::fwd,
               "softmax scale 1/sqrt(d) not applied to the scores", ""},
    MutantInfo{MutantId::exp_base_mismatch, "exp-base-mismatch", "FA_MUTANT_EXP_BASE_MISMATCH",
               MutantKind::fwd, "scores scaled by log2(e) for exp2 but exponentiated with exp", ""},
    MutantInfo{MutantId::causal_diagonal, "causal-diagonal", "FA_MUTANT_CAUSAL_DIAGONAL", MutantKind::fwd,
               "causal mask off by one at the diagonal: each query also sees the next key", ""},
    MutantInfo{MutantId::masked_row_nan, "masked-row-nan", "FA_MUTANT_MASKED_ROW_NAN", MutantKind::fwd,
               "no guard for a fully masked row: exp(-inf - (-inf)) = NaN", ""},
    MutantInfo{MutantId::tail_unmasked, "tail-unmasked", "FA_MUTANT_TAIL_UNMASKED", MutantKind::fwd,
               "last partial key block unmasked: zero-padded keys scored as 0", ""},
    MutantInfo{MutantId::lse_without_max, "lse-without-max", "FA_MUTANT_LSE_WITHOUT_MAX", MutantKind::fwd,
               "LSE stored as log(l) without adding the running max", ""},
    MutantInfo{MutantId::bwd_missing_delta, "bwd-missing-delta", "FA_MUTANT_BWD_MISSING_DELTA",
               MutantKind::bwd, "dS = P * dP without subtracting D = rowsum(dO * O)", ""},
    MutantInfo{MutantId::bwd_dk_missing_scale, "bwd-dk-missing-scale", "FA_MUTANT_BWD_DK_MISSING_SCALE",
               MutantKind::bwd, "dK not multiplied by the softmax scale", ""},
    MutantInfo{MutantId::bwd_dq_overwrite, "bwd-dq-overwrite", "FA_MUTANT_BWD_DQ_OVERWRITE", MutantKind::bwd,
               "dQ overwritten by each key block instead of accumulated across key blocks", ""},
    MutantInfo{MutantId::bwd_p_without_l, "bwd-p-without-l", "FA_MUTANT_BWD_P_WITHOUT_L", MutantKind::bwd,
               "backward recomputes P as exp(S - m), ignoring l (uses the row max instead of LSE)", ""},
    MutantInfo{
        MutantId::bwd_race, "bwd-race", "FA_MUTANT_BWD_RACE", MutantKind::gpu_only,
        "missing barrier before a shared-memory tile is reused in the backward",
        "a race needs concurrent threads sharing memory; the emulator is sequential per tile, so the GPU "
        "target detects it by repeated runs that must agree bit for bit"},
    MutantInfo{MutantId::fp8_missing_descale, "fp8-missing-descale", "FA_MUTANT_FP8_MISSING_DESCALE",
               MutantKind::fp8, "descale factor of K dropped from the FP8 score scale", ""},
    MutantInfo{
        MutantId::fp8_p_overflow, "fp8-p-overflow", "FA_MUTANT_FP8_P_OVERFLOW", MutantKind::fp8,
        "P quantised with a scale that lets it exceed the FP8 maximum: top weights saturate, l does not", ""},
};

inline constexpr std::size_t kMutantCount = kCatalogue.size();

constexpr MutantInfo const& info(MutantId id) {
  return kCatalogue[static_cast<std::size_t>(id)];
}
constexpr bool cpu_applicable(MutantId id) {
  return info(id).cpu_not_applicable_reason.empty();
}
std::optional<MutantId> find_mutant(std::string_view name);
std::string_view kind_name(MutantKind kind);

// The switch name follows from the id: FA_MUTANT_ + upper-case, '-' -> '_'. Checked at compile time so the
// table cannot drift from the rule the kernels helper relies on.
constexpr bool switch_name_follows_id(MutantInfo const& m) {
  constexpr std::string_view kPrefix = "FA_MUTANT_";
  if (m.switch_name.size() != kPrefix.size() + m.name.size()) return false;
  if (m.switch_name.substr(0, kPrefix.size()) != kPrefix) return false;
  for (std::size_t i = 0; i < m.name.size(); ++i) {
    char c = m.name[i];
    char expected = c == '-' ? '_' : (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    if (m.switch_name[kPrefix.size() + i] != expected) return false;
  }
  return true;
}

constexpr bool catalogue_is_consistent() {
  for (std::size_t i = 0; i < kCatalogue.size(); ++i) {
    if (static_cast<std::size_t>(kCatalogue[i].id) != i) return false;  // table order = enum order
    if (!switch_name_follows_id(kCatalogue[i])) return false;
  }
  return true;
}
static_assert(catalogue_is_consistent(), "mutant catalogue: ids out of order or switch names off the rule");

// The set of switches turned on for one emulator run (one mutant at a time in practice; a set lets a test
// combine them). Checked by the emulator at exactly the line where each bug lives.
class MutantSet {
 public:
  constexpr MutantSet() = default;
  static constexpr MutantSet none() { return {}; }
  static constexpr MutantSet only(MutantId id) {
    MutantSet s;
    s.bits_ = std::uint32_t{1} << static_cast<unsigned>(id);
    return s;
  }
  constexpr bool on(MutantId id) const { return (bits_ >> static_cast<unsigned>(id)) & 1U; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool operator==(MutantSet const&) const = default;

 private:
  static_assert(kMutantCount <= 32, "MutantSet holds 32 switches");
  std::uint32_t bits_ = 0;
};

}  // namespace fl::numerics::mutants
