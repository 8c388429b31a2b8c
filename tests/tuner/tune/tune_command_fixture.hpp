#pragma once
// What fa-tune's command tests share (tune_command_test.cpp, tune_command_resume_test.cpp): a fake backend
// whose evaluators answer from a landscape (optionally slowly, or raising a signal) and log every prepare
// and evaluation, and a database in a temporary folder.
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernel_source.hpp"
#include "tests/runtime/temp_kernels_dir.hpp"
#include "tuner/cli/tune_options.hpp"
#include "tuner/tune/tune_command.hpp"

namespace fl::test {

// Every config's time: a bowl in the config's values, scaled per family so that the families differ.
class LandscapeEvaluator final : public tuner::Evaluator {
 public:
  LandscapeEvaluator(double scale, std::function<void()> const* hook, std::vector<std::string>* log)
      : scale_(scale), hook_(hook), log_(log) {}
  void prepare(device::Problem const& problem) override {
    log_->push_back("prepare " + device::describe(problem));
  }
  tuner::Evaluation evaluate(device::Config const& config, device::Problem const& problem) override {
    if (log_->empty() || log_->back() != "evaluate " + device::describe(problem))
      log_->push_back("evaluate " + device::describe(problem));
    if (*hook_) (*hook_)();
    double ms = scale_;
    for (auto const& [name, value] : config) ms += 0.01 * std::fabs(std::log2(double(value) + 1.0) - 5.0);
    tuner::Evaluation e;
    e.stats = tuner::TimingStats{
        .median_ms = ms, .p20_ms = ms, .p80_ms = ms, .min_ms = ms, .max_ms = ms, .runs = 1};
    e.tflops = device::attention_flops(problem) / (ms * 1e-3) / 1e12;
    e.verify_ms = 1.0;
    e.timing_ms = 2.0;
    return e;
  }

 private:
  double scale_;
  std::function<void()> const* hook_;
  std::vector<std::string>* log_;  // prepare and evaluate calls, each problem's evaluations as one line
};

class FakeBackend final : public tuner::TuningBackend {
 public:
  db::GpuKey gpu() const override { return {"Fake GPU", 9, 0, 132, "1", 13000}; }
  std::string nvrtc_version() const override { return "13.0"; }
  int compile_workers() const override { return 0; }
  tuner::Evaluator& evaluator_for(device::Family const& family) override {
    auto& slot = evaluators_[std::string(family.name())];
    // fa3 fastest, then fa2, fa1, naive: the winner and its margin are known. Every tunable adds its bowl
    // term to the time, so fa3's 0.45 leaves it > 1.5x over fa2 with its eight tunables (kTransposeV, the
    // eighth, cost 0.5's margin: 1.48x).
    double const scale = family.name() == "naive"      ? 4.0
                         : family.name() == "fa1"      ? 2.0
                         : family.name() == "fa3_sm90" ? 0.45
                                                       : 1.0;
    if (!slot) slot = std::make_unique<LandscapeEvaluator>(scale, &hook, &log);
    return *slot;
  }
  std::function<void()> hook;
  std::vector<std::string> log;
  std::map<std::string, std::unique_ptr<LandscapeEvaluator>> evaluators_;
};

inline tuner::TuneOptions options_for(std::vector<std::string> args) {
  std::vector<char const*> argv{"fa-tune"};
  for (auto const& a : args) argv.push_back(a.c_str());
  return tuner::parse_tune_options(int(argv.size()), argv.data());
}

struct CommandFixture {
  TempKernelsDir dir;
  std::filesystem::path db_path = dir.path() / "tune.sqlite";
  std::filesystem::path kernels = runtime::resolve_kernels_dir(std::nullopt).value();
  FakeBackend backend;
  tuner::TuningReport run(std::vector<std::string> args, std::function<int()> stop = {}) {
    return tuner::run_tuning(options_for(std::move(args)), backend, kernels, db_path, stop);
  }
};

inline int searched(tuner::TuneRow const& row) {
  return row.evaluated + row.resumed;
}

}  // namespace fl::test
