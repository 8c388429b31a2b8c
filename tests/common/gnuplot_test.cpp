// gnuplot through common/gnuplot: a program that is not gnuplot is not taken for it.
#include "common/gnuplot.hpp"

#include <catch2/catch.hpp>

#include <chrono>

TEST_CASE("a program that answers --version but is not gnuplot is not available, at once",
          "[common][gnuplot]") {
  // `fa-fp8-report --gnuplot yes` ran coreutils' yes as the plotter: it exits 0 on --version, then prints
  // forever when handed a script (the fuzz harness's hang, seed 7).
  auto const started = std::chrono::steady_clock::now();
  CHECK_FALSE(fl::common::gnuplot_available("yes"));
  CHECK_FALSE(fl::common::gnuplot_available("true"));
  CHECK_FALSE(fl::common::gnuplot_available("/nonexistent/gnuplot"));
  CHECK_FALSE(fl::common::gnuplot_available(""));
  CHECK(std::chrono::steady_clock::now() - started <
        std::chrono::seconds(fl::common::kGnuplotVersionSeconds));
}
