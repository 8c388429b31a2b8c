#include "tuner/run/timing.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>
#include <vector>

#include "runtime/device.hpp"
#include "tuner/measure/early_stop.hpp"

using fl::tuner::TimingOptions;

namespace {
// Each launch enqueues nothing: what is under test is time_runs' bookkeeping of the runs, not a kernel.
struct CountingLaunch {
  std::vector<int> seen;
  fl::runtime::Status operator()(int i) {
    seen.push_back(i);
    return fl::runtime::Status{};
  }
};
}  // namespace

TEST_CASE("time_runs keeps every timed run in order, with its launch index and end time", "[gpu][tuner]") {
  auto context = fl::runtime::PrimaryContext::retain(0);
  REQUIRE(context.ok());
  CountingLaunch launch;
  auto timed = fl::tuner::time_runs(std::ref(launch), TimingOptions{3, 25, std::nullopt});
  REQUIRE(timed.ok());
  REQUIRE(timed->samples.size() == 25);
  REQUIRE(launch.seen.size() == 28);  // 3 warm-up launches first, untimed
  std::vector<double> ms;
  for (std::size_t i = 0; i < timed->samples.size(); ++i) {
    auto const& s = timed->samples[i];
    CHECK(s.launch == 3 + int(i));
    CHECK(s.ms >= 0.0);
    if (i > 0) CHECK(s.ended >= timed->samples[i - 1].ended);
    ms.push_back(s.ms);
  }
  // The statistics are those of exactly these samples.
  auto const stats = fl::tuner::summarize(ms);
  REQUIRE(stats.has_value());
  CHECK(timed->stats.median_ms == stats->median_ms);
  CHECK(timed->stats.runs == 25);
}

TEST_CASE("time_runs cut after the probe keeps the probe's runs only", "[gpu][tuner]") {
  auto context = fl::runtime::PrimaryContext::retain(0);
  REQUIRE(context.ok());
  CountingLaunch launch;
  // A threshold no run can beat: every candidate is clearly slower, so the probe ends the timing.
  auto timed = fl::tuner::time_runs(std::ref(launch), TimingOptions{0, 30, -1.0});
  REQUIRE(timed.ok());
  CHECK(timed->samples.size() == std::size_t(fl::tuner::kProbeRuns));
  CHECK(timed->stats.runs == fl::tuner::kProbeRuns);
}

TEST_CASE("time_runs settles for settle_ms of untimed launches between the warm-up and the timed runs",
          "[gpu][tuner]") {
  auto context = fl::runtime::PrimaryContext::retain(0);
  REQUIRE(context.ok());
  // Each launch takes 0.2 ms of host time, as a launch of a short kernel would, so that the settle's
  // batches have a time per launch to size themselves by.
  struct SlowLaunch {
    std::vector<int> seen;
    fl::runtime::Status operator()(int i) {
      seen.push_back(i);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      return fl::runtime::Status{};
    }
  } launch;
  auto const began = std::chrono::system_clock::now();
  TimingOptions options{2, 20, std::nullopt};
  options.settle_ms = 50;
  auto timed = fl::tuner::time_runs(std::ref(launch), options);
  REQUIRE(timed.ok());
  REQUIRE(timed->samples.size() == 20);
  // Launch indices run on without a gap: the warm-up's, the settle's, then the timed runs'.
  for (std::size_t i = 0; i < launch.seen.size(); ++i) CHECK(launch.seen[i] == int(i));
  int const settled = int(launch.seen.size()) - 20 - 2;
  CHECK(settled >= 1);
  CHECK(timed->samples.front().launch == 2 + settled);
  // The first timed run ends after the settle's 50 ms, and the settle does not run on far past them
  // (its batches are sized to end near the deadline; the bound leaves room for a loaded machine).
  auto const first_end = timed->samples.front().ended - began;
  CHECK(first_end >= std::chrono::milliseconds(50));
  CHECK(first_end < std::chrono::milliseconds(1050));
}
