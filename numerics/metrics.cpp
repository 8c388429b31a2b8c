#include "numerics/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "numerics/compensated_sum.hpp"

namespace fl::numerics {

double element_error(double observed, double reference) {
  if (std::isnan(observed) || std::isnan(reference)) return std::numeric_limits<double>::infinity();
  if (std::isinf(observed) || std::isinf(reference))
    return observed == reference ? 0.0 : std::numeric_limits<double>::infinity();
  return std::fabs(observed - reference);
}

ErrorMetrics compute_metrics(std::span<double const> observed, std::span<double const> reference) {
  if (observed.size() != reference.size()) throw std::invalid_argument("compute_metrics: sizes differ");
  ErrorMetrics m;
  m.count = observed.size();
  CompensatedSum sq_err, sq_ref, sq_obs, cross, abs_err, abs_ref;
  std::size_t finite_pairs = 0;
  for (std::size_t i = 0; i < observed.size(); ++i) {
    double const x = observed[i];
    double const r = reference[i];
    if (std::isnan(x))
      ++m.nan_count;
    else if (std::isinf(x) && x != r)
      ++m.inf_count;
    double const e = element_error(x, r);
    if (e > m.max_abs || (i == 0 && e >= m.max_abs)) {
      m.max_abs = e;
      m.worst_index = i;
    }
    if (!std::isfinite(x) || !std::isfinite(r)) continue;
    ++finite_pairs;
    sq_err.add((x - r) * (x - r));
    sq_ref.add(r * r);
    sq_obs.add(x * x);
    cross.add(x * r);
    abs_err.add(std::fabs(x - r));
    abs_ref.add(std::fabs(r));
  }
  if (finite_pairs > 0) m.rmse = std::sqrt(sq_err.value() / double(finite_pairs));
  double const ref_norm = std::sqrt(sq_ref.value());
  double const obs_norm = std::sqrt(sq_obs.value());
  double const err_norm = std::sqrt(sq_err.value());
  m.rel_frobenius =
      ref_norm > 0.0 ? err_norm / ref_norm : (err_norm > 0.0 ? std::numeric_limits<double>::infinity() : 0.0);
  if (ref_norm > 0.0 && obs_norm > 0.0)
    m.cosine = cross.value() / (ref_norm * obs_norm);
  else
    m.cosine = (ref_norm == 0.0 && obs_norm == 0.0) ? 1.0 : 0.0;
  m.rel_l1 = abs_ref.value() > 0.0 ? abs_err.value() / abs_ref.value()
                                   : (abs_err.value() > 0.0 ? std::numeric_limits<double>::infinity() : 0.0);
  return m;
}

std::vector<double> per_row_max_abs(std::span<double const> observed, std::span<double const> reference,
                                    std::size_t row_length) {
  if (observed.size() != reference.size() || row_length == 0 || observed.size() % row_length != 0)
    throw std::invalid_argument("per_row_max_abs: sizes do not split into rows");
  std::vector<double> rows(observed.size() / row_length, 0.0);
  for (std::size_t i = 0; i < observed.size(); ++i)
    rows[i / row_length] = std::max(rows[i / row_length], element_error(observed[i], reference[i]));
  return rows;
}

}  // namespace fl::numerics
