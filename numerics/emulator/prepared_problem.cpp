#include "numerics/emulator/prepared_problem.hpp"

#include <stdexcept>
#include <string>

namespace fl::numerics::emulator {

namespace {

void expect_size(char const* what, std::size_t got, std::size_t want) {
  if (got != want)
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(got) +
                                " values, the shape needs " + std::to_string(want));
}
}  // namespace

void validate(QuantizedOperands const& ops, EmulatorConfig const& config) {
  common::AttentionShape const& s = ops.shape;
  if (s.batch < 1 || s.heads_q < 1 || s.heads_kv < 1 || s.seqlen_q < 1 || s.seqlen_k < 1 || s.head_dim < 1)
    throw std::invalid_argument("attention shape has a dimension below 1");
  if (s.heads_q % s.heads_kv != 0)
    throw std::invalid_argument("heads_q = " + std::to_string(s.heads_q) +
                                " is not a multiple of heads_kv = " + std::to_string(s.heads_kv));
  for (int tile : {config.tiles.block_m, config.tiles.block_n})
    if (tile < 1 || tile > kMaxTile)
      throw std::invalid_argument("tile size " + std::to_string(tile) + " outside 1.." +
                                  std::to_string(kMaxTile));
  if (config.warps_n < 1 || config.tiles.block_n % config.warps_n != 0)
    throw std::invalid_argument("warps_n = " + std::to_string(config.warps_n) + " must be >= 1 and divide " +
                                "kBlockN = " + std::to_string(config.tiles.block_n));
  expect_size("Q", ops.q.size(), s.q_elements());
  expect_size("K", ops.k.size(), s.kv_elements());
  expect_size("V", ops.v.size(), s.kv_elements());
  expect_size("Q descale", ops.q_descale.size(), s.lse_elements());
  expect_size("K descale", ops.k_descale.size(), s.kv_elements() / static_cast<std::size_t>(s.head_dim));
  expect_size("V descale", ops.v_descale.size(), s.kv_elements() / static_cast<std::size_t>(s.head_dim));
}

PreparedProblem::PreparedProblem(QuantizedOperands const& ops, EmulatorConfig const& config) : ops_(&ops) {
  validate(ops, config);
}

HeadView PreparedProblem::head(std::size_t bh) const {
  common::AttentionShape const& s = ops_->shape;
  auto const d = static_cast<std::size_t>(s.head_dim);
  auto const nq = static_cast<std::size_t>(s.seqlen_q);
  auto const nk = static_cast<std::size_t>(s.seqlen_k);
  std::size_t const b = bh / static_cast<std::size_t>(s.heads_q);
  auto const h = static_cast<int>(bh % static_cast<std::size_t>(s.heads_q));
  std::size_t const bhk =
      b * static_cast<std::size_t>(s.heads_kv) + static_cast<std::size_t>(s.kv_head_of(h));
  return HeadView{ops_->q.data() + bh * nq * d,  ops_->q_descale.data() + bh * nq,
                  ops_->k.data() + bhk * nk * d, ops_->k_descale.data() + bhk * nk,
                  ops_->v.data() + bhk * nk * d, ops_->v_descale.data() + bhk * nk};
}

}  // namespace fl::numerics::emulator
