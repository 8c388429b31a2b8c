#include "tuner/tune/nearest_tuned.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/precision.hpp"
#include "tuner/strategy/family_space.hpp"
#include "tuner/tune/db_rows.hpp"
#include "tuner/tune/tune_loop.hpp"

namespace fl::tuner {

namespace {
constexpr double kHeadDimStep = 4.0;
constexpr double kOtherMask = 2.0;
constexpr double kOtherDtypeSameWidth = 1.0;
constexpr double kSeqlenStep = 1.0;
constexpr double kWorkStep = 0.5;

double log2_ratio(double a, double b) {
  return std::fabs(std::log2(a / b));
}
}  // namespace

double shape_distance(device::Problem const& wanted, device::Problem const& tuned) {
  if (wanted.direction != tuned.direction) return std::numeric_limits<double>::infinity();
  if (common::is_fp8(wanted.dtype) != common::is_fp8(tuned.dtype))
    return std::numeric_limits<double>::infinity();
  auto const& w = wanted.shape;
  auto const& t = tuned.shape;
  double d = kHeadDimStep * log2_ratio(w.head_dim, t.head_dim);
  if (w.causal != t.causal) d += kOtherMask;
  if (wanted.dtype != tuned.dtype) d += kOtherDtypeSameWidth;
  d += kSeqlenStep * 0.5 * (log2_ratio(w.seqlen_q, t.seqlen_q) + log2_ratio(w.seqlen_k, t.seqlen_k));
  d += kWorkStep * log2_ratio(double(w.batch) * w.heads_q, double(t.batch) * t.heads_q);
  if (w.group_size() != t.group_size()) d += kWorkStep * log2_ratio(w.group_size(), t.group_size());
  return d;
}

TunedAnswer nearest_tuned(device::Family const& family, device::Problem const& problem,
                          std::vector<db::BestConfig> const& known) {
  TunedAnswer answer;
  answer.config = device::to_string(family.default_config(problem));
  double best = std::numeric_limits<double>::infinity();
  std::string best_shape;
  for (auto const& row : known) {
    if (row.family != family.name()) continue;
    auto const config = device::parse_config(row.config);
    if (!config) continue;
    auto const tuned = problem_from_key(row.problem);
    double const distance = shape_distance(problem, tuned);
    if (!std::isfinite(distance)) continue;
    ++answer.considered;
    if (family.violates(*config, problem)) continue;
    // Ties go to the larger measured speed, then to the shape's name, so the answer never depends on order.
    auto const shape = device::describe(tuned);
    bool const nearer =
        distance < best ||
        (distance == best && answer.from &&
         (row.tflops > answer.from->tflops || (row.tflops == answer.from->tflops && shape < best_shape)));
    if (!nearer) continue;
    best = distance;
    best_shape = shape;
    answer.from = row;
    answer.config = row.config;
    answer.distance = distance;
    answer.kind = distance == 0.0 ? AnswerKind::tuned : AnswerKind::nearest;
  }
  return answer;
}

std::vector<device::Config> warm_start_configs(device::Family const& family, device::Problem const& problem,
                                               std::vector<db::BestConfig> const& known, std::size_t limit) {
  struct Near {
    double distance;
    double tflops;
    std::string shape;
    device::Config config;
  };
  // Only a point of this problem's space: valid here (Family::violates), and spelled as the search spells it.
  // A row tuned before the family gained a parameter does not name it, and its kernel ran with that
  // parameter's built-in fallback, which need not be default_config's value (fa3_sm90's FP8 causal default
  // sets kTransposeV=1, its kernel's fallback is 0), so it cannot be completed here. Measured under its old
  // spelling, it is a row a resume never replays (stored_rows.hpp): on 2026-12-07 (H200) a resume stored
  // 2.221 ms as fa3_sm90 fp16 d64 causal n16384's best, over such a row's 2.156 ms.
  auto const space = family_space(family, problem);
  std::vector<Near> near;
  for (auto const& row : known) {
    if (row.family != family.name()) continue;
    auto const config = device::parse_config(row.config);
    auto const tuned = problem_from_key(row.problem);
    double const distance = shape_distance(problem, tuned);
    if (!config || !std::isfinite(distance) || distance == 0.0 || !space.point_of(*config)) continue;
    near.push_back({distance, row.tflops, device::describe(tuned), *config});
  }
  std::sort(near.begin(), near.end(), [](Near const& a, Near const& b) {
    if (a.distance != b.distance) return a.distance < b.distance;
    if (a.tflops != b.tflops) return a.tflops > b.tflops;
    return a.shape < b.shape;
  });
  std::vector<device::Config> configs;
  for (auto const& n : near) {
    if (configs.size() >= limit) break;
    if (std::find(configs.begin(), configs.end(), n.config) == configs.end()) configs.push_back(n.config);
  }
  return configs;
}

std::vector<db::BestConfig> with_seeds(std::vector<db::BestConfig> measured,
                                       std::vector<db::BestConfig> const& seeds,
                                       std::string const& gpu_name) {
  std::size_t const own = measured.size();
  for (auto const& seed : seeds) {
    if (seed.gpu.name != gpu_name) continue;
    auto const has_row = [&](db::BestConfig const& row) {
      return row.family == seed.family && row.problem == seed.problem;
    };
    if (std::none_of(measured.begin(), measured.begin() + std::ptrdiff_t(own), has_row))
      measured.push_back(seed);
  }
  return measured;
}

}  // namespace fl::tuner
