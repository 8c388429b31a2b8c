#include "numerics/emulator/prepared_problem.hpp"

#include <stdexcept>
#include <string>

namespace fl::numerics::emulator {

namespace {
constexpr int kMaxTile = 1024;  // far above any kernel's tile (256); guards against garbage configs

void expect_size(char const* what, std::size_t got, std::size_t want) {
  if (got != want)
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(got) +
                                " values, the shape needs " + std::to_string(want));
}
}  // namespace

void validate(AttentionProblem const& problem, EmulatorConfig const& config) {
  AttentionShape const& s = problem.shape;
  if (s.batch < 1 || s.heads_q < 1 || s.heads_kv < 1 || s.seqlen_q < 1 || s.seqlen_k < 1 || s.head_dim < 1)
    throw std::invalid_argument("attention shape has a dimension below 1");
  if (s.heads_q % s.heads_kv != 0)
    throw std::invalid_argument("heads_q = " + std::to_string(s.heads_q) +
                                " is not a multiple of heads_kv = " + std::to_string(s.heads_kv));
  for (int tile : {config.tiles.block_m, config.tiles.block_n})
    if (tile < 1 || tile > kMaxTile)
      throw std::invalid_argument("tile size " + std::to_string(tile) + " outside 1.." +
                                  std::to_string(kMaxTile));
  expect_size("Q", problem.q.size(), s.q_elements());
  expect_size("K", problem.k.size(), s.kv_elements());
  expect_size("V", problem.v.size(), s.kv_elements());
}

PreparedProblem::PreparedProblem(AttentionProblem const& problem, EmulatorConfig const& config)
    : shape_(problem.shape) {
  validate(problem, config);
  q_ = prepare_operand(config.precision, problem.q, shape_.head_dim);
  k_ = prepare_operand(config.precision, problem.k, shape_.head_dim);
  v_ = prepare_operand(config.precision, problem.v, shape_.head_dim);
}

HeadView PreparedProblem::head(std::size_t bh) const {
  auto const d = static_cast<std::size_t>(shape_.head_dim);
  auto const nq = static_cast<std::size_t>(shape_.seqlen_q);
  auto const nk = static_cast<std::size_t>(shape_.seqlen_k);
  std::size_t const b = bh / static_cast<std::size_t>(shape_.heads_q);
  auto const h = static_cast<int>(bh % static_cast<std::size_t>(shape_.heads_q));
  std::size_t const bhk =
      b * static_cast<std::size_t>(shape_.heads_kv) + static_cast<std::size_t>(shape_.kv_head_of(h));
  return HeadView{q_.values.data() + bh * nq * d,  q_.row_descale.data() + bh * nq,
                  k_.values.data() + bhk * nk * d, k_.row_descale.data() + bhk * nk,
                  v_.values.data() + bhk * nk * d, v_.row_descale.data() + bhk * nk};
}

}  // namespace fl::numerics::emulator
