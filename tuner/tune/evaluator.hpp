#pragma once
// What the tuning loop asks of one candidate: compile it, verify it, time it. The GPU evaluator does that
// on the device; the replay evaluator answers from recorded costs, so the loop (resume, strategies,
// storage) is tested without a GPU exactly as it runs with one.
#include <optional>
#include <string>

#include "device/config.hpp"
#include "device/problem.hpp"
#include "tuner/measure/timing_stats.hpp"
#include "tuner/tune/tuning_protocol.hpp"

namespace fl::tuner {

struct Evaluation {
  std::string verdict = "ok";  // ok, wrong, pruned, failed (db/tuning_store.hpp)
  std::string diagnosis;       // why, when not ok
  std::optional<TimingStats> stats;
  db::TimingProtocol protocol = kTuningProtocol;  // how `stats` were taken (read only where they are set)
  double tflops = 0.0;
  std::string compile_cache_key;
  std::optional<double> clock_mhz;
  std::optional<double> temperature_c;
  // The GPU's context is unusable after this candidate (a sticky CUDA error: illegal address, launch
  // failure, ...): every later call in this process would fail too, so the loop stops here.
  bool context_lost = false;
  // Timed by the probe runs only: clearly slower than the best so far (tuner/measure/early_stop.hpp).
  bool timing_cut = false;
  // Where the time went (ms of wall time on the calling thread, except compile_ms).
  double compile_ms = 0.0;       // NVRTC time spent on this candidate (on a compile worker; 0 on a cache hit)
  double compile_wait_ms = 0.0;  // the caller waited for the compile (0 when compiled ahead in time)
  double verify_ms = 0.0;        // runs on the verification problems and their verdicts
  // verify_ms's parts (0 where not measured apart, e.g. a replay): building the verification sets (the
  // first candidate of a problem that asks for them: inputs, float64 reference, bounds), the small problem
  // (its run and verdict) and the timed problem's run (load, upload, launch, download); the rest is the wait
  // for its verdict.
  double verify_sets_ms = 0.0;
  double verify_small_ms = 0.0;
  double verify_timed_run_ms = 0.0;
  double timing_ms = 0.0;  // the timed runs, with uploads and warm-up
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual Evaluation evaluate(device::Config const& config, device::Problem const& problem) = 0;
  // A hint: `config` is likely to be evaluated soon; an evaluator may start compiling it now.
  virtual void prefetch(device::Config const& /*config*/, device::Problem const& /*problem*/) {}
  // A hint: the run will tune `problem` next; an evaluator may start what its verification needs (the GPU
  // evaluator: a backward problem's float64 forward, ReferenceCache::forward_ahead, or a forward problem's
  // verification set, ReferenceCache::normal_set_ahead).
  virtual void prepare(device::Problem const& /*problem*/) {}
  // After an evaluation with context_lost: make the GPU usable again (a fresh context or worker process).
  // True when the next candidate can run; false ends the run after the culprit.
  virtual bool recover() { return false; }
  // The median (ms) of the fastest config of this problem so far, before each evaluation (nullopt: none yet,
  // or a --noise-runs repeat, which times everything in full): an evaluator may cut the timing of a
  // candidate that is clearly slower (tuner/measure/early_stop.hpp).
  virtual void hear_best(std::optional<double> /*best_ms*/) {}
};

}  // namespace fl::tuner
