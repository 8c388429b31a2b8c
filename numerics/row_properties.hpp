#pragma once
// What a query row looks like to a softmax: where its maximum score sits, the sign and range of its
// scaled scores, whether it is masked. Computed from the inputs alone (so it works on anyone's .npy
// files); fa-check prints it for the worst rows, and the differential diagnosis groups failing rows by it.
#include <cstddef>
#include <string>

#include "numerics/attention_tensors.hpp"

namespace fl::numerics {

struct RowProperties {
  std::size_t row = 0;  // flat query row
  RowIndex index;
  int visible_keys = 0;    // 0: fully masked
  int argmax_key = -1;     // position of the largest scaled score among visible keys
  double max_score = 0.0;  // scaled scores over visible keys
  double min_score = 0.0;
  double second_max_score = 0.0;

  bool fully_masked() const { return visible_keys == 0; }
  bool all_scores_negative() const { return !fully_masked() && max_score < 0.0; }
  int argmax_block(int block_n) const { return argmax_key / block_n; }
  int last_visible_block(int block_n) const { return (visible_keys - 1) / block_n; }
  bool max_in_first_block(int block_n) const { return !fully_masked() && argmax_block(block_n) == 0; }
  bool max_in_last_block(int block_n) const {
    return !fully_masked() && argmax_block(block_n) == last_visible_block(block_n);
  }
  // The row's visible keys end inside a partial key block of size block_n.
  bool ends_in_partial_block(int block_n) const { return !fully_masked() && visible_keys % block_n != 0; }
};

RowProperties row_properties(AttentionInputs const& in, std::size_t row);

// One line, e.g. "row 5 (b0 h1 i5): 6 keys visible, max 3.2 at key 0 (block 0 of 1 for kBlockN 64),
// scores in [-2.1, 3.2]".
std::string describe(RowProperties const& p, int block_n);

}  // namespace fl::numerics
