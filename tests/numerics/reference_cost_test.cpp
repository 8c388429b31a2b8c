// Not part of CI ([.]): the float64 reference's forward pass with D (reference_forward_rows, what fa-tune
// computes once per backward problem) per score and thread, O summed compensated and plain, at d 64, 128
// and 256 on one thread. A benchmark, never asserted on time; numerics/README.md ("Costs") quotes it. Run:
//   build/bin/test_numerics "[reference-cost]"
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>

#include "numerics/reference.hpp"
#include "tests/numerics/test_inputs.hpp"

using namespace fl::numerics;

TEST_CASE("the reference's forward with D, per score and thread", "[.][reference-cost]") {
  for (int d : {64, 128, 256}) {
    int const n = d == 256 ? 1024 : 2048;
    AttentionInputs const in = test::random_inputs(test::make_shape(1, 1, 1, n, n, d, false), 5);
    for (auto const sum : {OutputSum::compensated, OutputSum::plain}) {
      ReferenceOptions options;
      options.threads = 1;
      options.o_sum = sum;
      auto const start = std::chrono::steady_clock::now();
      ReferenceForward const forward = reference_forward_rows(in, options);
      double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      CHECK(forward.o.size() == std::size_t(n) * std::size_t(d));
      std::printf("d %3d n %5d, O %-11s: %6.1f ns per score\n", d, n,
                  sum == OutputSum::plain ? "plain" : "compensated", s / (double(n) * n) * 1e9);
    }
  }
}
