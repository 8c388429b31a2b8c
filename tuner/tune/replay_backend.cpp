#include "tuner/tune/replay_backend.hpp"

#include <algorithm>
#include <cstdio>

#include "tuner/measure/early_stop.hpp"
#include "tuner/tune/gpu_evaluator.hpp"
#include "tuner/tune/tuning_protocol.hpp"

namespace fl::tuner {

RecordedEvaluator::RecordedEvaluator(Recording const& recording, std::string family, bool cut_clearly_slower)
    : recording_(recording), family_(std::move(family)), cut_clearly_slower_(cut_clearly_slower) {}

Evaluation RecordedEvaluator::evaluate(device::Config const& config, device::Problem const& problem) {
  Evaluation e;
  auto const it = recording_.rows.find({family_, device::describe(problem), device::to_string(config)});
  if (it == recording_.rows.end()) {
    e.verdict = "failed";
    e.diagnosis = "replay: not in the recording";
    return e;
  }
  auto const& row = it->second;
  auto const& m = row.measurement;
  e.verdict = m.verdict;
  e.diagnosis = m.diagnosis;
  // A recorded sticky fault replays as one: the context is lost and, as on the H200, cannot be reset in the
  // process (recover() is the Evaluator's default, false).
  e.context_lost = m.verdict == "failed" && is_sticky_cuda_error(m.diagnosis);
  if (m.median_ms) {
    double const median = *m.median_ms;
    e.stats = TimingStats{.median_ms = median,
                          .p20_ms = m.p20_ms.value_or(median),
                          .p80_ms = m.p80_ms.value_or(median),
                          .min_ms = m.p20_ms.value_or(median),
                          .max_ms = m.p80_ms.value_or(median),
                          .runs = kTuningTimedRuns};  // recordings are of fa-tune's protocol
    e.tflops = m.tflops.value_or(device::attention_flops(problem) / (median * 1e-3) / 1e12);
    std::vector<double> const probe(kProbeRuns, e.stats->p20_ms);
    if (m.verdict == "ok" && cut_after_probe(probe, cut_threshold_ms(best_ms_))) {
      e.stats->runs = kProbeRuns;
      e.timing_cut = true;
    }
  }
  e.compile_wait_ms = row.compile_wait_ms.value_or(0.0);
  e.compile_ms = row.compile_ms.value_or(0.0);
  e.verify_ms = row.verify_ms.value_or(0.0);
  e.timing_ms = row.timing_ms.value_or(0.0);
  // A cut candidate saves the timed runs it skipped (the recording timed all of them).
  if (e.timing_cut)
    e.timing_ms = std::max(0.0, e.timing_ms - double(kTuningTimedRuns - kProbeRuns) * e.stats->median_ms);
  return e;
}

namespace {
// The recording's "GPU NVIDIA H200 cc9.0 132 SMs, driver ..." line gives the compute capability and SMs (the
// key needs them); a recording without one replays as cc 1.0 with 1 SM.
db::GpuKey replay_gpu(Recording const& recording, std::filesystem::path const& path) {
  db::GpuKey gpu{std::string(kReplayGpuPrefix) + path.filename().string(), 1, 0, 1, "replay", 0};
  auto const& line = recording.gpu_line;
  if (auto const cc = line.find(" cc"); cc != std::string::npos)
    if (std::sscanf(line.c_str() + cc, " cc%d.%d %d SMs", &gpu.cc_major, &gpu.cc_minor, &gpu.sm_count) != 3) {
      gpu.cc_major = 1;
      gpu.cc_minor = 0;
      gpu.sm_count = 1;
    }
  return gpu;
}
}  // namespace

ReplayBackend::ReplayBackend(std::filesystem::path const& recording, bool cut_clearly_slower)
    : recording_(read_recording(recording)),
      gpu_(replay_gpu(recording_, recording)),
      cut_clearly_slower_(cut_clearly_slower) {}

bool ReplayBackend::can_measure(device::Family const& family, device::Problem const& problem) const {
  return recording_.order.contains({std::string(family.name()), device::describe(problem)});
}

Evaluator& ReplayBackend::evaluator_for(device::Family const& family) {
  auto& slot = evaluators_[std::string(family.name())];
  if (!slot)
    slot = std::make_unique<RecordedEvaluator>(recording_, std::string(family.name()), cut_clearly_slower_);
  return *slot;
}

}  // namespace fl::tuner
