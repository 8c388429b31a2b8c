#pragma once
// The float64 online softmax of one query row that the forward block models run (block_models.cpp): the
// row's visible keys, their statistics per key block of one size, and the blocks combined in a key order and
// split-KV chunks with one forward bug or none. Internal to numerics/diagnosis.
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "numerics/attention_tensors.hpp"

namespace fl::numerics::diagnosis::block_detail {

inline constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The forward bugs a block model expresses, and how.
enum class ForwardBug {
  unrescaled_o,
  unrescaled_l,
  stale_max,
  normalize_in_loop,
  exp_base_mismatch,
  lse_without_max,
  tail_unmasked
};
inline constexpr ForwardBug kForwardBugs[] = {ForwardBug::unrescaled_o,      ForwardBug::unrescaled_l,
                                              ForwardBug::stale_max,         ForwardBug::normalize_in_loop,
                                              ForwardBug::exp_base_mismatch, ForwardBug::lse_without_max,
                                              ForwardBug::tail_unmasked};
char const* id_of(ForwardBug b);

// One key block of one row: its max score, sum of exp(gamma (x - max)) and the same weights times V.
struct BlockStats {
  double max = kNegInf;
  double sum = 0;
  std::vector<double> weighted_v;
};

struct Config {
  int block_n = 0;
  bool reverse = false;
  int splits = 1;
};

std::string describe(Config const& c);

// The visible keys of one query row: scaled scores (natural-log units) and the V rows.
struct RowKeys {
  std::vector<double> score;
  std::vector<double const*> v;
};

RowKeys row_keys(AttentionInputs const& in, std::size_t row, int extra_keys = 0);

std::vector<BlockStats> block_stats(RowKeys const& keys, int block_n, double gamma, int pads, std::size_t d);

struct RowResult {
  std::vector<double> o;
  double lse = kNegInf;
};

// The online softmax over `blocks` in the configured order and split-KV chunks, with one bug (or none).
RowResult run_blocks(std::vector<BlockStats> const& blocks, Config const& c, std::optional<ForwardBug> bug,
                     double gamma, std::size_t d);

}  // namespace fl::numerics::diagnosis::block_detail
