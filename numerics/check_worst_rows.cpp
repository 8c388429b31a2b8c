#include "numerics/check_worst_rows.hpp"

#include <algorithm>
#include <sstream>

namespace fl::numerics {

namespace {

std::string describe_key_row(common::AttentionShape const& s, std::size_t c, int block_n) {
  RowIndex const x = key_row_index(s, c);
  std::ostringstream out;
  out << "key row " << c << " (b" << x.batch << " h_kv" << x.head << " j" << x.pos << "): key block "
      << x.pos / block_n << " of " << (s.seqlen_k + block_n - 1) / block_n << " for kBlockN " << block_n;
  if (x.pos / block_n == (s.seqlen_k - 1) / block_n && s.seqlen_k % block_n != 0)
    out << ", in the partial tail block";
  if (s.causal) {
    std::int64_t const first = std::max<std::int64_t>(0, x.pos - s.causal_offset());
    out << ", seen by query rows " << first << ".." << s.seqlen_q - 1;
  }
  return out.str();
}

}  // namespace

void collect_worst_rows(AttentionInputs const& in, CheckOptions const& o, CheckResult& r) {
  std::vector<WorstRow> all;
  for (std::size_t k = 0; k < r.judgement.outputs.size(); ++k) {
    OutputJudgement const& oj = r.judgement.outputs[k];
    if (!oj.checked) continue;
    bool const key = k >= 3;
    auto const& rows = key ? r.reference.sample.key_rows : r.reference.sample.query_rows;
    for (std::size_t t = 0; t < rows.size(); ++t) {
      WorstRow w;
      w.output = oj.name;
      w.row = rows[t];
      w.index = key ? key_row_index(in.shape, rows[t]) : query_row_index(in.shape, rows[t]);
      w.max_error = oj.row_max_error[t];
      w.ratio = oj.row_max_ratio[t];
      all.push_back(w);
    }
  }
  std::size_t const keep = std::min(o.worst_rows_listed, all.size());
  std::partial_sort(all.begin(), all.begin() + std::ptrdiff_t(keep), all.end(),
                    [](WorstRow const& a, WorstRow const& b) { return a.ratio > b.ratio; });
  all.resize(keep);
  for (WorstRow& w : all)
    w.properties = (w.output == "dK" || w.output == "dV")
                       ? describe_key_row(in.shape, w.row, o.report_block_n)
                       : describe(row_properties(in, w.row), o.report_block_n);
  r.worst_rows = std::move(all);
}

}  // namespace fl::numerics
