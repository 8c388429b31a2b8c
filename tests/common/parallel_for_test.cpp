// common::parallel_for covers [0, count) once, on any thread count; elementwise_threads keeps small passes on
// the calling thread.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <vector>

#include "common/parallel_for.hpp"

using namespace fl::common;

TEST_CASE("parallel_for visits every index exactly once", "[common]") {
  for (int threads : {1, 2, 7, 0})
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{100003}}) {
      INFO(threads << " threads, " << count << " indices");
      std::vector<std::atomic<int>> seen(count);
      parallel_for(count, threads, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) seen[i].fetch_add(1);
      });
      CHECK(std::all_of(seen.begin(), seen.end(), [](auto const& s) { return s.load() == 1; }));
    }
}

TEST_CASE("elementwise passes below 2^16 elements stay on one thread", "[common]") {
  CHECK(elementwise_threads(0) == 1);
  CHECK(elementwise_threads((std::size_t{1} << 16) - 1, 8) == 1);
  CHECK(elementwise_threads(std::size_t{1} << 16) == 0);  // 0: every core
  CHECK(elementwise_threads(std::size_t{1} << 20, 3) == 3);
}
