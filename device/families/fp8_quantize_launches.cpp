#include "device/families/fp8_quantize_launches.hpp"

#include <algorithm>

#include "kernels_src/fp8_quantize.h"

namespace fl::device {

namespace {

bool per_tensor(Problem const& problem) {
  return problem.fp8.scaling == common::Fp8Scaling::per_tensor;
}

std::string arguments(Problem const& problem, bool with_element, bool with_head_dim) {
  std::string out;
  if (with_element) out += element_type_name(problem.dtype);
  if (with_head_dim) out += (out.empty() ? "" : ", ") + std::to_string(problem.shape.head_dim);
  return out;
}

// A pre-transposed V (Problem::fp8.pretransposed_v): fp8_quantize_transposed_v, V's codes written as
// fa3_sm90's V^T.
std::string quantize_name(Problem const& problem) {
  return std::string(pretransposed_v(problem) ? "fp8_quantize_transposed_v<" : "fp8_quantize<") +
         arguments(problem, true, true) + ", " + (per_tensor(problem) ? "true" : "false") + ">";
}

}  // namespace

std::string fp8_program_file(std::string const& forward_file, Problem const& problem) {
  return quantizes_on_device(problem) ? "fp8_quantize_" + forward_file : forward_file;
}

int fp8_descale_blocks(Problem const& problem, int tensor) {
  auto const& s = problem.shape;
  int const rows = descale_block_rows(problem);
  if (rows <= 0) return 1;
  int const matrices = s.batch * (tensor == 0 ? s.heads_q : s.heads_kv);
  return matrices * fp8q::blocks_per_matrix(tensor == 0 ? s.seqlen_q : s.seqlen_k, rows);
}

std::vector<std::string> fp8_quantize_name_expressions(Problem const& problem) {
  if (!quantizes_on_device(problem)) return {};
  if (!per_tensor(problem)) return {quantize_name(problem)};
  return {"fp8_block_amax<" + arguments(problem, false, true) + ">",
          "fp8_tensor_scale<" + arguments(problem, true, false) + ">", quantize_name(problem)};
}

std::vector<LaunchStep> fp8_quantize_launches(Problem const& problem) {
  std::vector<LaunchStep> steps;
  unsigned const blocks =
      unsigned(std::max({fp8_descale_blocks(problem, 0), fp8_descale_blocks(problem, 1)}));
  for (auto const& name : fp8_quantize_name_expressions(problem)) {
    LaunchStep step;
    step.name_expression = name;
    bool const one_per_tensor = name.rfind("fp8_tensor_scale", 0) == 0;
    step.grid = {one_per_tensor ? 1u : blocks, unsigned(fp8q::kTensors), 1};
    step.block = {unsigned(fp8q::kThreads), 1, 1};
    step.takes_tensor_maps = false;
    steps.push_back(step);
  }
  return steps;
}

std::size_t fp8_amax_scratch_bytes(Problem const& problem) {
  if (!quantizes_on_device(problem) || !per_tensor(problem)) return 0;
  std::size_t const blocks = std::size_t(fp8_descale_blocks(problem, 0)) + 2 * fp8_descale_blocks(problem, 1);
  return sizeof(double) * (blocks + fp8q::kTensors);
}

}  // namespace fl::device
