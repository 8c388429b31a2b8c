#pragma once
// Verification's CPU half on the timed problem (the screen of every output row and the per-element verdict
// on the sampled rows: ~0.75 s per candidate on this machine's cores at the H200 tuning shape) runs on a
// second thread while the calling thread times the same candidate on the GPU. The verdict is always waited
// for before anything is returned, and the caller keeps no timing of a candidate judged wrong (GpuEvaluator
// returns 'wrong' before reading it): a wrong kernel still never produces a number. What the overlap costs
// is the timing of a kernel that turns out wrong (rare: most wrong kernels already fail the small problem,
// which is judged first); the caller still sees that timing's error (a sticky CUDA fault it caused).
#include <chrono>
#include <future>
#include <optional>
#include <type_traits>

namespace fl::tuner {

template <class Verdict, class Measured>
struct JudgedMeasurement {
  Verdict verdict;
  std::optional<Measured> measured;  // whenever measure ran: with overlap always, else only after a pass
  double judge_wait_ms = 0.0;        // waited for the verdict after (or instead of) measuring
};

// overlap false: judge, then measure only what passed (the 2026-11-29 order).
template <class Judge, class Measure>
auto judge_while_measuring(bool overlap, Judge&& judge, Measure&& measure)
    -> JudgedMeasurement<std::invoke_result_t<Judge&>, std::invoke_result_t<Measure&>> {
  using Result = JudgedMeasurement<std::invoke_result_t<Judge&>, std::invoke_result_t<Measure&>>;
  auto const ms_since = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  if (!overlap) {
    auto const start = std::chrono::steady_clock::now();
    Result result{judge(), std::nullopt, 0.0};
    result.judge_wait_ms = ms_since(start);
    if (result.verdict.pass) result.measured.emplace(measure());
    return result;
  }
  // std::async's future joins in its destructor, so the judge never outlives this call, even if measure
  // throws.
  auto verdict = std::async(std::launch::async, [&judge] { return judge(); });
  auto measured = measure();
  auto const start = std::chrono::steady_clock::now();
  Result result{verdict.get(), std::move(measured), 0.0};
  result.judge_wait_ms = ms_since(start);
  return result;
}

}  // namespace fl::tuner
