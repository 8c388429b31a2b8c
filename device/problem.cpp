#include "device/problem.hpp"

#include <algorithm>
#include <sstream>

namespace fl::device {

namespace {
constexpr double kForwardFlopsPerMac = 4.0;   // two GEMMs (QK^T and PV), 2 FLOPs per multiply-add each
constexpr double kBackwardOverForward = 2.5;  // five GEMMs against two
}  // namespace

double attention_flops(Problem const& problem) {
  auto const& s = problem.shape;
  double flops =
      kForwardFlopsPerMac * s.batch * s.heads_q * double(s.seqlen_q) * double(s.seqlen_k) * s.head_dim;
  if (s.causal) flops /= 2.0;
  if (problem.direction == Direction::backward) flops *= kBackwardOverForward;
  return flops;
}

int headline_batch(int seqlen, std::int64_t tokens) {
  return static_cast<int>(std::max<std::int64_t>(1, tokens / seqlen));
}

int headline_heads(int head_dim) {
  return std::max(1, kHeadlineWidth / head_dim);
}

Problem headline_problem(int seqlen, int head_dim, bool causal, common::Precision dtype,
                         Direction direction) {
  Problem p;
  p.shape.batch = headline_batch(seqlen);
  p.shape.heads_q = p.shape.heads_kv = headline_heads(head_dim);
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
  if (!common::is_fp8(p.dtype)) return "";
  std::string out;
  if (p.fp8.scaling == common::Fp8Scaling::per_block) out += " per_block" + std::to_string(p.fp8.block_rows);
  if (p.fp8.incoherent) out += " incoherent";
  if (p.fp8.on_device) out += " quantized_on_device";
  if (p.fp8.bf16_pv) out += " bf16_pv";
  if (p.fp8.pretransposed_v) out += " pretransposed_v";
  return out;
}
}  // namespace

std::string describe(Problem const& p) {
  auto const& s = p.shape;
  return "b" + std::to_string(s.batch) + " h" + std::to_string(s.heads_q) + "/" + std::to_string(s.heads_kv) +
         " n" + std::to_string(s.seqlen_q) + "x" + std::to_string(s.seqlen_k) + " d" +
         std::to_string(s.head_dim) + " " + std::string(common::name(p.dtype)) +
         (s.causal ? " causal " : " full ") + direction_name(p.direction) + fp8_suffix(p);
}

std::string dtype_key(Problem const& problem) {
  return std::string(common::name(problem.dtype)) + fp8_suffix(problem);
}

std::optional<std::pair<common::Precision, Fp8Options>> parse_dtype_key(std::string const& key) {
  std::istringstream words(key);
  std::string word;
  words >> word;
  auto const dtype = common::parse_precision(word);
  if (!dtype) return std::nullopt;
  Fp8Options fp8;
  std::string const per_block = "per_block";
  while (words >> word) {
    if (!common::is_fp8(*dtype)) return std::nullopt;
    if (word == "incoherent") {
      fp8.incoherent = true;
    } else if (word == "quantized_on_device") {
      fp8.on_device = true;
    } else if (word == "bf16_pv") {
      fp8.bf16_pv = true;
    } else if (word == "pretransposed_v") {
      fp8.pretransposed_v = true;
    } else if (word.rfind(per_block, 0) == 0 && word.size() > per_block.size()) {
      auto const rows = word.substr(per_block.size());
      if (rows.find_first_not_of("0123456789") != std::string::npos || rows.size() > 6) return std::nullopt;
      fp8.scaling = common::Fp8Scaling::per_block;
      fp8.block_rows = std::stoi(rows);
    } else {
      return std::nullopt;
    }
  }
  return std::pair{*dtype, fp8};
}

bool quantizes_on_device(Problem const& problem) {
  return common::is_fp8(problem.dtype) && problem.fp8.on_device;
}

bool pretransposed_v(Problem const& problem) {
  return common::is_fp8(problem.dtype) && problem.fp8.pretransposed_v;
}

int descale_block_rows(Problem const& problem) {
  if (!common::is_fp8(problem.dtype)) return 0;
  if (problem.fp8.scaling == common::Fp8Scaling::per_block) return problem.fp8.block_rows;
  return problem.fp8.on_device ? kUniformDescaleBlockRows : 0;
}

}  // namespace fl::device
