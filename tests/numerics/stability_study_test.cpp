// The stability study measures what it says: one standard and one tiled row per kBlockN and problem, errors
// that shrink with the precision's unit roundoff (fp32 far below bf16), the sampled rows of a large n, and
// refusals that name the bad value.
#include "numerics/stability_study.hpp"

#include <catch2/catch.hpp>

#include "numerics/precision.hpp"

namespace {
using namespace fl::numerics;
}

TEST_CASE("the stability study compares tiled and standard attention with the float64 reference",
          "[stability]") {
  StabilityOptions o;
  o.seqlens = {64, 512};
  o.block_ns = {16, 64};
  o.precisions = {fl::common::Precision::bf16, fl::common::Precision::fp32};
  o.families = {InputFamily::normal};
  o.head_dim = 16;
  o.block_m = 32;
  o.full_rows_limit = 100;
  o.sampled_rows = 64;
  o.threads = 1;
  std::vector<StabilityRow> const rows = run_stability_study(o);
  // (bf16 with O rounded and with O in fp32, fp32 once) x seqlens x (standard + 2 tiled)
  REQUIRE(rows.size() == 3 * 2 * 3);
  for (StabilityRow const& r : rows) {
    INFO(name(r.precision) << " n " << r.seqlen << " " << r.method << " " << r.block_n);
    CHECK(r.rows == (r.seqlen <= 100 ? std::size_t(r.seqlen) : 64u));
    CHECK(r.max_abs >= r.rmse);
    CHECK(r.rmse > 0);
    double const unit = unit_roundoff(r.precision);
    CHECK(r.max_abs < 64 * unit);  // a few roundoffs of |O| <= max |V| ~ 4
    CHECK(r.max_abs > unit / 4096);
    CHECK((r.method == "standard") == (r.block_n == 0));
  }
  // Keeping O in fp32 removes the final rounding: bf16 rows with an fp32 O deviate less than rounded ones.
  auto find = [&](fl::common::Precision out, char const* method, int n) {
    for (StabilityRow const& r : rows)
      if (r.precision == fl::common::Precision::bf16 && r.output == out && r.method == method &&
          r.seqlen == n)
        return r.rmse;
    return -1.0;
  };
  CHECK(find(fl::common::Precision::fp32, "standard", 512) <
        find(fl::common::Precision::bf16, "standard", 512));
}

TEST_CASE("the stability study refuses a sample it cannot take", "[stability]") {
  StabilityOptions o;
  o.sampled_rows = 100;  // not a multiple of kBlockM 64
  CHECK_THROWS_WITH(run_stability_study(o), Catch::Contains("sampled rows 100"));
  o.sampled_rows = 128;
  o.seqlens = {2000};
  o.full_rows_limit = 1024;
  o.block_ns = {0};
  CHECK_THROWS_WITH(run_stability_study(o), Catch::Contains("kBlockN = 0"));
  // Beyond kStabilitySeqlen (2^17) the study would hold about 40 bytes per n x head dim, unbounded; the
  // GPU runner (fa-bench --stability-study) validates through here too.
  o.block_ns = {64};
  o.seqlens = {(1 << 17) + 1};
  CHECK_THROWS_WITH(run_stability_study(o), Catch::Equals("--seqlens 131073 is not allowed (1..131072)"));
}
