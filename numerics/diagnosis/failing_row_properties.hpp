#pragma once
// What the failing rows have in common, for the diagnosis' evidence: a bug in the online softmax shows up in
// rows with a particular shape of scores (maximum arriving in a late key block, all scores negative, fully
// masked, keys ending in a partial tail block), and naming that shape tells the reader why the bug bit there.
#include <cstddef>
#include <string>
#include <vector>

#include "numerics/attention_tensors.hpp"
#include "numerics/diagnosis/diagnose.hpp"
#include "numerics/row_properties.hpp"

namespace fl::numerics::diagnosis {

// A property is "shared" when at least this fraction of the failing rows has it: a bug rarely breaks every
// row of its class by more than the tolerance, and an exact 100% rule would hide the pattern.
inline constexpr double kSharedFraction = 0.9;
// Rows examined (each costs N_k * D): the first ones in row order, enough to see a pattern.
inline constexpr std::size_t kMaxRowsSummarised = 512;

class FailingRowSummary {
 public:
  FailingRowSummary(common::AttentionShape shape, std::vector<RowProperties> query_rows,
                    std::vector<std::size_t> key_rows);
  // "max in a late key block (40/40), keys end in a partial tail block (40/40)", or "" when nothing is
  // shared.
  std::string shared(int block_n, int block_m) const;

 private:
  common::AttentionShape shape_;
  std::vector<RowProperties> query_rows_;
  std::vector<std::size_t> key_rows_;
};

FailingRowSummary summarise_failing_rows(AttentionInputs const& in, FailingRows const& failing,
                                         bool backward);

}  // namespace fl::numerics::diagnosis
