// The screen of every row (numerics/check_sample.hpp): it flags exactly the rows with a planted fault, and
// the same rows on one thread and on many (it runs head by head in parallel above 2^16 elements).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "numerics/check_sample.hpp"
#include "numerics/precision_recipe.hpp"
#include "test_inputs.hpp"

using namespace fl::numerics;

namespace {

// Outputs that pass the screen: each O row is a V row it sees (inside the range of the V rows it averages),
// LSE 0 where a key is visible, gradients 0.
AttentionOutputs clean_outputs(AttentionInputs const& in) {
  auto const& s = in.shape;
  std::size_t const d = std::size_t(s.head_dim);
  AttentionOutputs out;
  out.o.assign(s.q_elements(), 0.0);
  out.lse.assign(std::size_t(s.batch) * s.heads_q * s.seqlen_q, 0.0);
  for (std::size_t row = 0; row < out.lse.size(); ++row) {
    int const pos = int(row % std::size_t(s.seqlen_q));
    if (visible_keys(s, pos) == 0) {
      out.lse[row] = -std::numeric_limits<double>::infinity();
      continue;
    }
    std::size_t const key = first_key_row_for_query(s, row);
    std::copy_n(in.v.begin() + std::ptrdiff_t(key * d), d, out.o.begin() + std::ptrdiff_t(row * d));
  }
  out.dq.assign(s.q_elements(), 0.0);
  out.dk.assign(s.kv_elements(), 0.0);
  out.dv.assign(s.kv_elements(), 0.0);
  return out;
}

}  // namespace

TEST_CASE("the screen flags exactly the faulty rows, the same on one thread and on many", "[numerics]") {
  for (bool causal : {false, true}) {
    INFO((causal ? "causal" : "full"));
    // 2 x 4 x 600 x 64 = 307200 elements of O: above elementwise_threads' 2^16, so the heads run in parallel.
    auto const shape = test::make_shape(2, 4, 4, 600, 600, 64, causal);
    auto const in = test::random_inputs(shape, 5);
    auto out = clean_outputs(in);
    auto const recipe = recipe_for(fl::common::Precision::bf16);
    std::size_t const n = 600, d = 64;
    CHECK(screened_query_rows(in, out, recipe, 1).empty());
    CHECK(nonfinite_key_rows(shape, out, 1).empty());

    std::vector<std::size_t> const bad_queries{1 * n + 5, 3 * n + 100, 6 * n + 599, 7 * n + 300};
    out.o[bad_queries[0] * d + 7] = std::numeric_limits<double>::quiet_NaN();
    out.dq[bad_queries[1] * d] = std::numeric_limits<double>::infinity();
    out.o[bad_queries[2] * d + 63] = 1e6;  // far outside the range of V
    out.lse[bad_queries[3]] = std::numeric_limits<double>::quiet_NaN();
    std::vector<std::size_t> const bad_keys{17, 5 * n + 300};
    out.dk[bad_keys[0] * d + 2] = std::numeric_limits<double>::quiet_NaN();
    out.dv[bad_keys[1] * d + 40] = -std::numeric_limits<double>::infinity();

    for (int threads : {1, 0, 3}) {
      INFO(threads << " threads (0: every core)");
      CHECK(screened_query_rows(in, out, recipe, threads) == bad_queries);
      CHECK(nonfinite_key_rows(shape, out, threads) == bad_keys);
    }
  }
}
