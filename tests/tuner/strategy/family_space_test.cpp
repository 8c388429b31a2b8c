// fa-tune's candidates for naive (tuner::family_space, what tune_command hands every strategy): no 16-bit S
// (kScoreBits = 16 claims a looser bound than the problem's fp32-score recipe the tuner judges by, so each
// such candidate was compiled, run and rejected as wrong), and the default still a point of the space.
#include <catch2/catch.hpp>

#include "device/families/registry.hpp"
#include "tuner/strategy/family_space.hpp"

using namespace fl;

TEST_CASE("fa-tune's space for naive proposes kScoreBits = 32 only, the default included", "[tuner]") {
  auto const family = device::find_family("naive");
  REQUIRE(family);
  for (int d : {64, 128, 256})
    for (bool causal : {false, true}) {
      auto const problem =
          device::headline_problem(4096, d, causal, common::Precision::bf16, device::Direction::forward);
      INFO(device::describe(problem));
      auto const space = tuner::family_space(*family, problem);
      auto const points = space.valid_points();
      REQUIRE_FALSE(points.empty());
      CHECK(points.size() == device::enumerate_space(*family, problem).size());
      for (auto const& point : points) CHECK(space.config_of(point).at("kScoreBits") == 32);
      // The default (kScoreBits = 32) keeps its point: fa-tune measures it first.
      auto const fallback = family->default_config(problem);
      CHECK(space.point_of(fallback));
      // A 16-bit S config (fa-bench --config kScoreBits=16) is not a candidate, nor a warm start.
      auto sixteen = fallback;
      sixteen["kScoreBits"] = 16;
      CHECK_FALSE(family->violates(sixteen, problem));
      CHECK_FALSE(space.point_of(sixteen));
    }
}
