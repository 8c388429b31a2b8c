#include "tuner/tune/db_rows.hpp"

#include <string>

#include "common/precision.hpp"

namespace fl::tuner {

db::ProblemKey problem_key(device::Problem const& problem) {
  auto const& s = problem.shape;
  return {s.batch,
          s.heads_q,
          s.heads_kv,
          s.seqlen_q,
          s.seqlen_k,
          s.head_dim,
          device::dtype_key(problem),
          s.causal,
          device::direction_name(problem.direction)};
}

device::Problem problem_from_key(db::ProblemKey const& key) {
  device::Problem p;
  p.shape.batch = key.batch;
  p.shape.heads_q = key.heads_q;
  p.shape.heads_kv = key.heads_kv;
  p.shape.seqlen_q = key.seqlen_q;
  p.shape.seqlen_k = key.seqlen_k;
  p.shape.head_dim = key.head_dim;
  p.shape.causal = key.causal;
  if (auto const dtype = device::parse_dtype_key(key.dtype)) {
    p.dtype = dtype->first;
    p.fp8 = dtype->second;
  } else {
    p.dtype = common::Precision::bf16;
  }
  p.direction = key.direction == device::direction_name(device::Direction::backward)
                    ? device::Direction::backward
                    : device::Direction::forward;
  return p;
}

db::Measurement measurement_of(Evaluation const& e) {
  db::Measurement m;
  m.verdict = e.verdict;
  m.diagnosis = e.diagnosis;
  if (e.stats) {
    m.median_ms = e.stats->median_ms;
    m.p20_ms = e.stats->p20_ms;
    m.p80_ms = e.stats->p80_ms;
    m.min_ms = e.stats->min_ms;
    m.max_ms = e.stats->max_ms;
    m.runs = e.stats->runs;
    m.tflops = e.tflops;
    m.protocol = e.protocol;
  }
  m.clock_mhz = e.clock_mhz;
  m.temperature_c = e.temperature_c;
  m.compile_cache_key = e.compile_cache_key;
  // Set here, not by the store: a best config keeps its measurement's time (best_configs.recorded_at).
  m.measured_at = db::utc_timestamp();
  return m;
}
}  // namespace fl::tuner
