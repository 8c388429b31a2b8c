// The rows of the GPU error study (numerics/fp8_study's choice).
#include <catch2/catch.hpp>

#include "tuner/run/fp8_error_study.hpp"

using namespace fl::tuner;

TEST_CASE("the GPU error study evaluates numerics' rows: all up to n = 1024, one seeded 128-row tile beyond",
          "[tuner][fp8]") {
  Fp8ErrorStudyOptions const o;
  CHECK(fp8_study_rows(512, o).size() == 512u);
  auto const rows = fp8_study_rows(4096, o);
  REQUIRE(rows.size() == 128u);
  CHECK(rows.front() % 128 == 0);
  CHECK(rows.back() == rows.front() + 127);
  CHECK(rows.back() < 4096 - 128);         // never the last tile (numerics draws from tiles 0 .. n/128 - 2)
  CHECK(fp8_study_rows(4096, o) == rows);  // seeded
  CHECK(fp8_error_study_header().find(",source\n") != std::string::npos);
}
