// Conversion of emulator results to the float64 AttentionOutputs that the rest of numerics/ uses.
#include <cstddef>

#include "numerics/emulator/emulator.hpp"
#include "numerics/incoherent_processing.hpp"

namespace fl::numerics::emulator {

namespace {
std::vector<double> widen(std::vector<float> const& x) {
  return {x.begin(), x.end()};
}
}  // namespace

AttentionOutputs to_attention_outputs(ForwardResult const& forward, BackwardResult const* backward,
                                      QuantizedOperands const* ops) {
  AttentionOutputs out;
  out.o = widen(forward.o);
  out.lse = widen(forward.lse);
  if (backward == nullptr) return out;
  out.dq = widen(backward->dq);
  out.dk = widen(backward->dk);
  out.dv = widen(backward->dv);
  if (ops != nullptr && ops->transform) {
    // Gradients against the rotated Q M and K M: dQ = dQ' M^T, dK = dK' M^T.
    apply_incoherent_inverse(*ops->transform, out.dq);
    apply_incoherent_inverse(*ops->transform, out.dk);
  }
  return out;
}

AttentionOutputs emulate(AttentionInputs const& in, EmulatorConfig const& config) {
  return emulate(in, recipe_for(config.precision), config);
}

AttentionOutputs emulate(AttentionInputs const& in, PrecisionRecipe const& recipe,
                         EmulatorConfig const& config) {
  QuantizedOperands const ops = quantize_operands(in, recipe);
  ForwardResult const forward = emulate_forward(ops, recipe, config);
  if (!in.has_backward()) return to_attention_outputs(forward);
  BackwardResult const backward = emulate_backward(ops, recipe, forward, config);
  return to_attention_outputs(forward, &backward, &ops);
}

}  // namespace fl::numerics::emulator
