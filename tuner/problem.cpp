#include "tuner/problem.hpp"

#include <sstream>

namespace fl::tuner {

namespace {
constexpr double kForwardFlopsPerMac = 4.0;   // two GEMMs (QK^T and PV), 2 FLOPs per multiply-add each
constexpr double kBackwardOverForward = 2.5;  // five GEMMs against two
constexpr int kHeadlineTokens = 16384;        // b * n of the papers' benchmark shapes
constexpr int kHeadlineWidth = 2048;          // h * d
}  // namespace

double attention_flops(Problem const& problem) {
  auto const& s = problem.shape;
  double flops =
      kForwardFlopsPerMac * s.batch * s.heads_q * double(s.seqlen_q) * double(s.seqlen_k) * s.head_dim;
  if (s.causal) flops /= 2.0;
  if (problem.direction == Direction::backward) flops *= kBackwardOverForward;
  return flops;
}

Problem headline_problem(int seqlen, int head_dim, bool causal, numerics::Precision dtype,
                         Direction direction) {
  Problem p;
  p.shape.batch = kHeadlineTokens / seqlen;
  p.shape.heads_q = p.shape.heads_kv = kHeadlineWidth / head_dim;
  p.shape.seqlen_q = p.shape.seqlen_k = seqlen;
  p.shape.head_dim = head_dim;
  p.shape.causal = causal;
  p.dtype = dtype;
  p.direction = direction;
  return p;
}

std::string direction_name(Direction direction) {
  return direction == Direction::forward ? "fwd" : "bwd";
}

namespace {
// " per_block64 incoherent" for the FP8 options that differ from the default (per-tensor, no rotation).
std::string fp8_suffix(Problem const& p) {
  if (!numerics::is_fp8(p.dtype)) return "";
  std::string out;
  if (p.fp8.scaling == numerics::Fp8Scaling::per_block)
    out += " per_block" + std::to_string(p.fp8.block_rows);
  if (p.fp8.incoherent) out += " incoherent";
  if (p.fp8.on_device) out += " quantized_on_device";
  if (p.fp8.bf16_pv) out += " bf16_pv";
  return out;
}
}  // namespace

std::string describe(Problem const& p) {
  auto const& s = p.shape;
  return "b" + std::to_string(s.batch) + " h" + std::to_string(s.heads_q) + "/" + std::to_string(s.heads_kv) +
         " n" + std::to_string(s.seqlen_q) + "x" + std::to_string(s.seqlen_k) + " d" +
         std::to_string(s.head_dim) + " " + std::string(numerics::name(p.dtype)) +
         (s.causal ? " causal " : " full ") + direction_name(p.direction) + fp8_suffix(p);
}

std::string dtype_key(Problem const& problem) {
  return std::string(numerics::name(problem.dtype)) + fp8_suffix(problem);
}

std::optional<std::pair<numerics::Precision, Fp8Options>> parse_dtype_key(std::string const& key) {
  std::istringstream words(key);
  std::string word;
  words >> word;
  auto const dtype = numerics::parse_precision(word);
  if (!dtype) return std::nullopt;
  Fp8Options fp8;
  std::string const per_block = "per_block";
  while (words >> word) {
    if (!numerics::is_fp8(*dtype)) return std::nullopt;
    if (word == "incoherent") {
      fp8.incoherent = true;
    } else if (word == "quantized_on_device") {
      fp8.on_device = true;
    } else if (word == "bf16_pv") {
      fp8.bf16_pv = true;
    } else if (word.rfind(per_block, 0) == 0 && word.size() > per_block.size()) {
      auto const rows = word.substr(per_block.size());
      if (rows.find_first_not_of("0123456789") != std::string::npos || rows.size() > 6) return std::nullopt;
      fp8.scaling = numerics::Fp8Scaling::per_block;
      fp8.block_rows = std::stoi(rows);
    } else {
      return std::nullopt;
    }
  }
  return std::pair{*dtype, fp8};
}

bool quantizes_on_device(Problem const& problem) {
  return numerics::is_fp8(problem.dtype) && problem.fp8.on_device;
}

int descale_block_rows(Problem const& problem) {
  if (!numerics::is_fp8(problem.dtype)) return 0;
  if (problem.fp8.scaling == numerics::Fp8Scaling::per_block) return problem.fp8.block_rows;
  return problem.fp8.on_device ? kUniformDescaleBlockRows : 0;
}

numerics::PrecisionRecipe recipe_of(Problem const& problem) {
  numerics::PrecisionRecipe recipe = numerics::recipe_for(problem.dtype);
  if (numerics::is_fp8(problem.dtype)) {
    recipe.fp8_scaling = problem.fp8.scaling;
    recipe.fp8_block_rows = problem.fp8.block_rows;
    recipe.incoherent = problem.fp8.incoherent;
    recipe.incoherent_seed = problem.fp8.incoherent_seed;
  }
  return recipe;
}

numerics::PrecisionRecipe operand_recipe_of(Problem const& problem) {
  numerics::PrecisionRecipe const recipe = recipe_of(problem);
  if (!numerics::is_fp8(problem.dtype) || !problem.fp8.bf16_pv) return recipe;
  return numerics::with_fp8_variants(recipe, numerics::Fp8Variants{}.with(numerics::Fp8Variant::bf16_pv));
}

}  // namespace fl::tuner
