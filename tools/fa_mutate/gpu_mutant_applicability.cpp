// Which catalogued mutants the GPU campaign can run on this family and how often (GpuMutantRunner,
// gpu_mutant_runner.hpp): the dtypes and the backward the family supports, the switch in its source, and the
// repeats a race needs. Apart from the runner's compiling and running (gpu_mutant_runner.cpp).
#include "tools/fa_mutate/gpu_mutant_runner.hpp"

namespace fl::tools::fa_mutate {

using namespace fl::device;

namespace mut = numerics::mutants;
using common::Precision;

namespace {

// bwd-race: a missing barrier lets some warps read a shared-memory tile that others are still
// overwriting; whether that changes a bit depends on the warp interleaving of the run. Each extra run is
// one more interleaving compared with the first. On the H200 (2026-11-29) 5 runs of each of the
// campaign's n = 100 inputs never differed (each tile is reused once or twice there), so the campaign
// first reruns the mutant on a stress problem (fa-mutate --race-seqlen, default n = 1024: 16 reuses per
// key block) kRaceRepeats times. A race-free kernel (the backward runs its reproducible config) never
// differs; a backward at n = 1024 takes well under a millisecond, so the reruns cost nothing noticeable.
constexpr int kRaceRepeats = 10;

// Why bwd-p-without-l has no line to live on in our kernels, printed as its not-applicable reason.
constexpr char const* kNoSeparateL =
    "P recomputed as exp(S - m) ignoring l needs a forward that stores the row max m and the row sum l "
    "apart; every GPU family here stores only LSE = m * scale + log l (as the official FlashAttention code "
    "does), so the backward's P = exp(S * scale - LSE) is normalised by construction and the bug has no "
    "line to live on";
}  // namespace

std::optional<std::string> GpuMutantRunner::unsupported_precision(Precision precision) const {
  Problem p = representative_problem();
  p.dtype = precision;
  return forward_.family->unsupported(p);
}

std::optional<std::string> GpuMutantRunner::backward_unsupported(Precision precision) const {
  std::string const name = options_.family + "_bwd";
  if (!backward_)
    return options_.family + " has no backward on the GPU (no family " + name +
           " in device/families/registry)";
  Problem p = representative_problem(Direction::backward);
  p.dtype = precision;
  p.shape.head_dim = options_.head_dim;
  if (auto why = backward_->family->unsupported(p)) return name + ": " + *why;
  return std::nullopt;
}

bool GpuMutantRunner::runs_backward(mut::MutantId mutant) {
  return mut::info(mutant).kind == mut::MutantKind::bwd || mutant == mut::MutantId::bwd_race;
}

std::optional<std::string> GpuMutantRunner::not_applicable(mut::MutantId id, Precision precision) const {
  mut::MutantInfo const& m = mut::info(id);
  if (m.kind == mut::MutantKind::fp8) {
    if (auto why = unsupported_precision(Precision::fp8_e4m3))
      return "FP8 only, and " + options_.family + " has no FP8 path (" + *why + ")";
    if (!common::is_fp8(precision))
      return "FP8 only: there is no FP8 descale or P quantisation at " + std::string(common::name(precision));
  }
  if (runs_backward(id)) {
    if (auto why = backward_unsupported(precision)) return "backward mutant, and " + *why;
    if (!source_has_switch(backward_->text, m.switch_name)) {
      if (id == mut::MutantId::bwd_p_without_l) return kNoSeparateL;
      return std::string(m.switch_name) + " occurs in no #if line of " + backward_->files +
             ": this family does not carry the switch";
    }
    return std::nullopt;
  }
  if (!source_has_switch(forward_.text, m.switch_name))
    return std::string(m.switch_name) + " occurs in no #if line of " + forward_.files +
           ": this family does not carry the switch";
  return std::nullopt;
}

int GpuMutantRunner::repeats(mut::MutantId id) const {
  return id == mut::MutantId::bwd_race ? kRaceRepeats : 1;
}
}  // namespace fl::tools::fa_mutate
