#include "numerics/diagnosis/fa_check_diagnoser.hpp"

#include <algorithm>
#include <string>

#include "numerics/check_problem.hpp"
#include "numerics/diagnosis/block_models.hpp"
#include "numerics/diagnosis/bug_fixes.hpp"
#include "numerics/diagnosis/failure_signatures.hpp"
#include "numerics/diagnosis/interface_mistakes.hpp"
#include "numerics/quantized_operands.hpp"

namespace fl::numerics::diagnosis {

namespace {
void add_unique(std::vector<int>& list, int value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

// One entry per id: the better match, keeping a fix line either side had.
void merge_entry(std::vector<fl::numerics::DiagnosisEntry>& out, fl::numerics::DiagnosisEntry e) {
  auto same = std::find_if(out.begin(), out.end(), [&](auto const& x) { return x.id == e.id; });
  if (same == out.end()) {
    out.push_back(std::move(e));
    return;
  }
  if (e.match_error < same->match_error) {
    if (e.fix.empty()) e.fix = same->fix;
    *same = std::move(e);
  }
}
// Q, K, V as an FP8 kernel multiplies them (codes times descale), quantised per tensor and per block of 32,
// 64 or 128 rows (the tiles kernels scale by), without rotation: the float64 block models on these leave out
// only the rounding of P, where on the unquantised inputs e5m2's ~10% per element can hide a bug's 4x lead.
std::vector<AttentionInputs> fp8_operand_views(AttentionInputs const& in, PrecisionRecipe const& recipe) {
  std::vector<AttentionInputs> views;
  auto const d = std::size_t(in.shape.head_dim);
  for (int block_rows : {0, 32, 64, 128}) {  // 0: per tensor
    PrecisionRecipe r = recipe;
    r.fp8_scaling = block_rows == 0 ? common::Fp8Scaling::per_tensor : common::Fp8Scaling::per_block;
    r.fp8_block_rows = std::max(block_rows, 1);
    r.incoherent = false;
    AttentionInputs view{in.shape, {}, {}, {}, {}};
    AttentionInputs forward_only{in.shape, in.q, in.k, in.v, {}};
    QuantizedOperands const qo = quantize_operands(forward_only, r);
    auto dequantised = [d](std::vector<float> const& codes, std::vector<float> const& descale) {
      std::vector<double> out(codes.size());
      for (std::size_t i = 0; i < codes.size(); ++i) out[i] = double(codes[i]) * double(descale[i / d]);
      return out;
    };
    view.q = dequantised(qo.q, qo.q_descale);
    view.k = dequantised(qo.k, qo.k_descale);
    view.v = dequantised(qo.v, qo.v_descale);
    views.push_back(std::move(view));
  }
  return views;
}
}  // namespace

Diagnoser make_fa_check_diagnoser(std::vector<int> const& extra_block_sizes, int threads,
                                  std::vector<int> const& warp_columns) {
  DiagnosisOptions options;
  options.threads = threads;
  for (int size : extra_block_sizes) {
    if (auto complaint = common::out_of_range(kExtraBlockSize, size)) throw CheckInputError(*complaint);
    add_unique(options.block_n_candidates, size);
    add_unique(options.block_m_candidates, size);
  }
  for (int n : warp_columns) {
    if (auto complaint = common::out_of_range(kWarpColumns, n)) throw CheckInputError(*complaint);
    if (n == 1) continue;
    for (auto order : {emulator::KeyOrder::first_to_last, emulator::KeyOrder::last_to_first}) {
      Walk const walk{emulator::LoopOrder::fa2, order, n};
      if (std::find(options.walks.begin(), options.walks.end(), walk) == options.walks.end())
        options.walks.push_back(walk);
    }
  }
  DiagnosisOptions fallback = options;
  fallback.excluded = modelled_bugs();
  return [options, fallback, extra_block_sizes](DiagnosisRequest const& request) {
    // fa-check reports failing query rows of O, LSE and dQ together: the forward pass compares them on O and
    // LSE, the backward pass (tried when the forward names nothing) on dQ, dK and dV.
    FailingRows const failing{request.failing_query_rows, request.failing_query_rows,
                              request.failing_key_rows};
    // A failure pattern that identifies its bug whatever the implementation's tiles, order and precision
    // (failure_signatures.hpp) needs no model: it is the diagnosis.
    if (auto signature =
            masked_row_nan_signature(request.inputs, request.observed, request.failing_query_rows)) {
      fl::numerics::DiagnosisEntry entry;
      entry.id = signature->id;
      entry.evidence = signature->evidence;
      entry.match_error = signature->match_error;
      entry.kind = "bug";
      entry.fix = std::string(fix_for_bug(entry.id));
      entry.strength = signature->strength;
      return std::vector<fl::numerics::DiagnosisEntry>{entry};
    }
    // Exact models first, which hold for any implementation: interface mistakes, then the catalogued bugs'
    // float64 block models (forward; the backward's when no forward bug explains the output). The emulator
    // search, which reproduces a bug to the bit only in the walks it knows, is the fallback for the bugs
    // the models do not express (m-init-zero, masked-row-nan, the FP8 ones) and rounding-level effects.
    std::vector<fl::numerics::DiagnosisEntry> out = diagnose_interface(
        request.inputs, request.observed, request.failing_query_rows, options.threads, request.notes);
    ModelOptions const models{extra_block_sizes, options.threads, request.notes};
    for (auto& e : model_forward_bugs(request.inputs, request.observed, request.failing_query_rows, models))
      merge_entry(out, std::move(e));
    if (is_fp8(request.recipe.operands))
      for (AttentionInputs const& view : fp8_operand_views(request.inputs, request.recipe))
        for (auto& e : model_forward_bugs(view, request.observed, request.failing_query_rows, models))
          merge_entry(out, std::move(e));
    bool const forward_named =
        std::any_of(out.begin(), out.end(), [](auto const& e) { return e.id != "dropout-on"; });
    if (!forward_named)
      for (auto& e : model_backward_bugs(request.inputs, request.observed, models))
        merge_entry(out, std::move(e));
    bool const named =
        std::any_of(out.begin(), out.end(), [](auto const& e) { return e.id != "dropout-on"; });
    // FP8: the float64 models leave out FP8's rounding of Q, K, V and P (~10% per element in e5m2), which
    // can hide a modelled bug's lead over the reference; the emulator rounds as the recipe says, so there it
    // searches the modelled bugs too.
    DiagnosisOptions const& search = is_fp8(request.recipe.operands) ? options : fallback;
    Diagnosis const d =
        named ? Diagnosis{} : diagnose(request.inputs, request.observed, request.recipe, failing, search);
    if (!d.declined.empty() && request.notes)
      request.notes->push_back("diagnosis: the emulator search not tried: " + d.declined);
    for (auto const& e : d.entries) {
      fl::numerics::DiagnosisEntry entry;
      entry.id = e.id;
      entry.evidence = e.evidence;
      entry.match_error = e.match_error;
      entry.kind = "bug";
      entry.fix = std::string(fix_for_bug(e.id));
      entry.strength = e.strength;
      merge_entry(out, std::move(entry));
    }
    // Dropout is the one statistical hypothesis: it stands only where nothing deterministic explains the
    // output.
    if (out.size() > 1) std::erase_if(out, [](auto const& e) { return e.id == "dropout-on"; });
    return out;
  };
}

}  // namespace fl::numerics::diagnosis
