#include "numerics/diagnosis/failing_row_properties.hpp"

#include <algorithm>
#include <functional>
#include <sstream>
#include <utility>

namespace fl::numerics::diagnosis {

namespace {

struct QueryRowTest {
  char const* label;
  std::function<bool(RowProperties const&, common::AttentionShape const&, int block_n, int block_m)> holds;
};

bool in_partial_last_tile(int pos, int length, int tile) {
  return length % tile != 0 && pos >= (length / tile) * tile;
}

std::vector<QueryRowTest> const& query_row_tests() {
  static std::vector<QueryRowTest> const tests{
      {"fully masked",
       [](RowProperties const& p, common::AttentionShape const&, int, int) { return p.fully_masked(); }},
      {"all scores negative", [](RowProperties const& p, common::AttentionShape const&, int,
                                 int) { return p.all_scores_negative(); }},
      {"max in a late key block", [](RowProperties const& p, common::AttentionShape const&, int bn,
                                     int) { return !p.fully_masked() && p.argmax_block(bn) > 0; }},
      {"max in the first key block", [](RowProperties const& p, common::AttentionShape const&, int bn,
                                        int) { return p.max_in_first_block(bn); }},
      {"keys end in a partial tail block", [](RowProperties const& p, common::AttentionShape const&, int bn,
                                              int) { return p.ends_in_partial_block(bn); }},
      {"in the partial last query tile",
       [](RowProperties const& p, common::AttentionShape const& s, int, int bm) {
         return in_partial_last_tile(p.index.pos, s.seqlen_q, bm);
       }},
  };
  return tests;
}

template <typename T>
std::vector<T> first_n(std::vector<T> v, std::size_t n) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  if (v.size() > n) v.resize(n);
  return v;
}

void append(std::ostringstream& out, bool& first, char const* label, std::size_t count, std::size_t total) {
  out << (first ? "" : ", ") << label << " (" << count << "/" << total << ")";
  first = false;
}

}  // namespace

FailingRowSummary::FailingRowSummary(common::AttentionShape shape, std::vector<RowProperties> query_rows,
                                     std::vector<std::size_t> key_rows)
    : shape_(shape), query_rows_(std::move(query_rows)), key_rows_(std::move(key_rows)) {}

std::string FailingRowSummary::shared(int block_n, int block_m) const {
  std::ostringstream out;
  bool first = true;
  auto const is_shared = [](std::size_t count, std::size_t total) {
    return total > 0 && double(count) >= kSharedFraction * double(total);
  };
  for (auto const& test : query_row_tests()) {
    auto const count =
        static_cast<std::size_t>(std::count_if(query_rows_.begin(), query_rows_.end(), [&](auto const& p) {
          return test.holds(p, shape_, block_n, block_m);
        }));
    if (is_shared(count, query_rows_.size())) append(out, first, test.label, count, query_rows_.size());
  }
  if (!key_rows_.empty()) {
    auto const count =
        static_cast<std::size_t>(std::count_if(key_rows_.begin(), key_rows_.end(), [&](std::size_t c) {
          return in_partial_last_tile(key_row_index(shape_, c).pos, shape_.seqlen_k, block_n);
        }));
    if (is_shared(count, key_rows_.size()))
      append(out, first, "keys in the partial tail block", count, key_rows_.size());
  }
  return out.str();
}

FailingRowSummary summarise_failing_rows(AttentionInputs const& in, FailingRows const& failing,
                                         bool backward) {
  std::vector<RowProperties> query;
  for (std::size_t row : first_n(backward ? failing.dq : failing.forward, kMaxRowsSummarised))
    query.push_back(row_properties(in, row));
  std::vector<std::size_t> keys =
      backward ? first_n(failing.key, kMaxRowsSummarised) : std::vector<std::size_t>{};
  return FailingRowSummary(in.shape, std::move(query), std::move(keys));
}

}  // namespace fl::numerics::diagnosis
