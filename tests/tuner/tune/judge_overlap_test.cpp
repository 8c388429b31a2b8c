// judge_while_measuring (tuner/tune/judge_overlap.hpp): the verdict overlaps the measurement, is always
// waited for, and without overlap a failing verdict means nothing is measured.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "tuner/tune/judge_overlap.hpp"

using namespace fl::tuner;
using namespace std::chrono_literals;

namespace {
struct FakeVerdict {
  bool pass = true;
};
double seconds_of(auto&& work) {
  auto const start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

TEST_CASE("the verdict is computed while the candidate is timed, and always waited for", "[tuner][tune]") {
  bool judged = false;
  int measured = 0;
  auto judge = [&] {
    std::this_thread::sleep_for(200ms);
    judged = true;
    return FakeVerdict{true};
  };
  auto measure = [&] {
    std::this_thread::sleep_for(200ms);
    return ++measured;
  };
  double const overlapped = seconds_of([&] {
    auto const result = judge_while_measuring(true, judge, measure);
    CHECK(judged);  // joined before the result came back
    CHECK(result.verdict.pass);
    REQUIRE(result.measured);
    CHECK(*result.measured == 1);
  });
  double const serial = seconds_of([&] { (void)judge_while_measuring(false, judge, measure); });
  CHECK(measured == 2);
  CHECK(overlapped < 0.35);  // max(0.2, 0.2) plus scheduling, not the sum
  CHECK(serial >= 0.4);
}

TEST_CASE("a failing verdict: without overlap nothing is measured, with it the caller sees it failed",
          "[tuner][tune]") {
  int measured = 0;
  auto wrong = [] { return FakeVerdict{false}; };
  auto measure = [&] { return ++measured; };
  auto const serial = judge_while_measuring(false, wrong, measure);
  CHECK_FALSE(serial.verdict.pass);
  CHECK_FALSE(serial.measured);
  CHECK(measured == 0);
  auto const overlapped = judge_while_measuring(true, wrong, measure);
  CHECK_FALSE(overlapped.verdict.pass);  // GpuEvaluator returns 'wrong' on this and drops the timing
  CHECK(measured == 1);
}

TEST_CASE("the judge is joined even when the measurement throws", "[tuner][tune]") {
  bool judged = false;
  auto judge = [&] {
    std::this_thread::sleep_for(50ms);
    judged = true;
    return FakeVerdict{true};
  };
  auto measure = []() -> int { throw std::runtime_error("measure failed"); };
  CHECK_THROWS(judge_while_measuring(true, judge, measure));
  CHECK(judged);
}
