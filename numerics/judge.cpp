#include "numerics/judge.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fl::numerics {

namespace {

double ratio(double error, double tau) {
  if (std::isinf(error)) return std::numeric_limits<double>::infinity();
  if (tau <= 0.0) return error > 0.0 ? std::numeric_limits<double>::infinity() : 0.0;
  return error / tau;
}

OutputJudgement judge_one(std::string name, std::vector<double> const& observed_full,
                          std::vector<double> const& ref, std::vector<double> const& tau,
                          std::vector<std::size_t> const& rows, std::size_t row_length, bool lse) {
  OutputJudgement j;
  j.name = std::move(name);
  if (observed_full.empty() || ref.empty()) return j;
  j.checked = true;
  std::vector<double> obs = gather_rows(observed_full, rows, row_length);
  if (lse)  // FlashAttention-2 stores +inf for an empty row; both infinities mean "no key".
    for (std::size_t i = 0; i < obs.size(); ++i)
      if (std::isinf(ref[i]) && std::isinf(obs[i])) obs[i] = ref[i];
  j.metrics = compute_metrics(obs, ref);
  j.row_max_error.assign(rows.size(), 0.0);
  j.row_max_ratio.assign(rows.size(), 0.0);
  for (std::size_t i = 0; i < obs.size(); ++i) {
    double const e = element_error(obs[i], ref[i]);
    double const r = ratio(e, tau[i]);
    std::size_t const row = i / row_length;
    j.row_max_error[row] = std::max(j.row_max_error[row], e);
    j.row_max_ratio[row] = std::max(j.row_max_ratio[row], r);
    if (i == 0 || r > j.worst_ratio) {
      j.worst_ratio = r;
      j.worst_element = i;
    }
    if (r > 1.0) ++j.failing_elements;
  }
  for (std::size_t row = 0; row < rows.size(); ++row)
    if (j.row_max_ratio[row] > 1.0) j.failing_rows.push_back(rows[row]);
  return j;
}

void merge_rows(std::vector<std::size_t>& into, std::vector<std::size_t> const& more) {
  into.insert(into.end(), more.begin(), more.end());
  std::sort(into.begin(), into.end());
  into.erase(std::unique(into.begin(), into.end()), into.end());
}

}  // namespace

std::vector<double> gather_rows(std::vector<double> const& full, std::vector<std::size_t> const& rows,
                                std::size_t row_length) {
  std::vector<double> out(rows.size() * row_length);
  for (std::size_t t = 0; t < rows.size(); ++t)
    std::copy_n(full.begin() + std::ptrdiff_t(rows[t] * row_length), row_length,
                out.begin() + std::ptrdiff_t(t * row_length));
  return out;
}

Judgement judge(common::AttentionShape const& shape, SampledOutputs const& reference,
                ElementBounds const& bounds, AttentionOutputs const& observed) {
  std::size_t const d = std::size_t(shape.head_dim);
  auto const& qrows = reference.sample.query_rows;
  auto const& krows = reference.sample.key_rows;
  Judgement j;
  j.outputs.push_back(judge_one("O", observed.o, reference.o, bounds.o, qrows, d, false));
  j.outputs.push_back(judge_one("LSE", observed.lse, reference.lse, bounds.lse, qrows, 1, true));
  j.outputs.push_back(judge_one("dQ", observed.dq, reference.dq, bounds.dq, qrows, d, false));
  j.outputs.push_back(judge_one("dK", observed.dk, reference.dk, bounds.dk, krows, d, false));
  j.outputs.push_back(judge_one("dV", observed.dv, reference.dv, bounds.dv, krows, d, false));
  for (std::size_t i = 0; i < j.outputs.size(); ++i) {
    OutputJudgement const& o = j.outputs[i];
    if (o.failing_elements > 0) j.pass = false;
    merge_rows(i < 3 ? j.failing_query_rows : j.failing_key_rows, o.failing_rows);
  }
  return j;
}

}  // namespace fl::numerics
