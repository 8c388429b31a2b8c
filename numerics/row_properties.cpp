#include "numerics/row_properties.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "numerics/compensated_vector.hpp"

namespace fl::numerics {

RowProperties row_properties(AttentionInputs const& in, std::size_t row) {
  common::AttentionShape const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  RowProperties p;
  p.row = row;
  p.index = query_row_index(s, row);
  p.visible_keys = visible_keys(s, p.index.pos);
  if (p.visible_keys == 0) return p;
  std::size_t const k0 = first_key_row_for_query(s, row);
  double const scale = s.scale();
  p.max_score = -std::numeric_limits<double>::infinity();
  p.second_max_score = -std::numeric_limits<double>::infinity();
  p.min_score = std::numeric_limits<double>::infinity();
  for (int j = 0; j < p.visible_keys; ++j) {
    double const sc = scale * dot(in.q.data() + row * d, in.k.data() + (k0 + std::size_t(j)) * d, d);
    if (sc > p.max_score) {
      p.second_max_score = p.max_score;
      p.max_score = sc;
      p.argmax_key = j;
    } else if (sc > p.second_max_score) {
      p.second_max_score = sc;
    }
    p.min_score = std::min(p.min_score, sc);
  }
  return p;
}

std::string describe(RowProperties const& p, int block_n) {
  std::ostringstream out;
  out.precision(4);
  out << "row " << p.row << " (b" << p.index.batch << " h" << p.index.head << " i" << p.index.pos << "): ";
  if (p.fully_masked()) {
    out << "fully masked (no visible key)";
    return out.str();
  }
  out << p.visible_keys << " keys visible, max " << p.max_score << " at key " << p.argmax_key << " (block "
      << p.argmax_block(block_n) << " of " << p.last_visible_block(block_n) + 1 << " for kBlockN " << block_n
      << "), scores in [" << p.min_score << ", " << p.max_score << "]";
  if (p.all_scores_negative()) out << ", all negative";
  if (p.ends_in_partial_block(block_n)) out << ", keys end in a partial block";
  return out.str();
}

}  // namespace fl::numerics
