#pragma once
// `fa-tune --replay TSV`: the tuning backend that answers every candidate from a recorded run (the TSV of
// --export-measurements) instead of the GPU: verdict, median, p20/p80, TFLOP/s and, where recorded, the
// time each stage took. A candidate the recording lacks is 'failed' with "not in the recording". The run
// is keyed under a GPU named after the recording, so replayed rows never mix with measured ones.
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "tuner/tune/recorded_measurements.hpp"
#include "tuner/tune/tuning_backend.hpp"

namespace fl::tuner {

// The GPU name of replayed rows: "replay of <recording file>". The shipped-config listing skips them.
constexpr char const* kReplayGpuPrefix = "replay of ";

class RecordedEvaluator final : public Evaluator {
 public:
  RecordedEvaluator(Recording const& recording, std::string family, bool cut_clearly_slower = true);
  Evaluation evaluate(device::Config const& config, device::Problem const& problem) override;
  // The GPU evaluator's early stop replayed: a recorded candidate whose p20 (the recording's stand-in for
  // the fastest of the probe runs) is over the cut threshold answers with runs = kProbeRuns and timing_cut.
  void hear_best(std::optional<double> best_ms) override {
    if (cut_clearly_slower_) best_ms_ = best_ms;
  }

 private:
  Recording const& recording_;
  std::string family_;
  bool cut_clearly_slower_;
  std::optional<double> best_ms_;
};

class ReplayBackend final : public TuningBackend {
 public:
  // cut_clearly_slower: replay the early stop (--pace fast) or not (--pace baseline).
  explicit ReplayBackend(std::filesystem::path const& recording, bool cut_clearly_slower = true);
  db::GpuKey gpu() const override { return gpu_; }
  std::string nvrtc_version() const override { return "replay"; }
  int compile_workers() const override { return 0; }
  Evaluator& evaluator_for(device::Family const& family) override;
  bool can_measure(device::Family const& family, device::Problem const& problem) const override;

 private:
  Recording recording_;
  db::GpuKey gpu_;
  bool cut_clearly_slower_;
  std::map<std::string, std::unique_ptr<RecordedEvaluator>> evaluators_;
};

}  // namespace fl::tuner
