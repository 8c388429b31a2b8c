#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "numerics/check.hpp"
#include "numerics/check_sample.hpp"
#include "numerics/input_families.hpp"
#include "numerics/standard_attention.hpp"
#include "tests/numerics/test_inputs.hpp"

using namespace fl::numerics;
using fl::numerics::test::make_shape;

namespace {

FamilyInputs sampled_inputs(bool backward) {
  FamilyRequest r;
  r.shape = make_shape(1, 2, 1, 300, 340, 16, true);
  r.seed = 5;
  r.precision = fl::common::Precision::fp16;
  r.with_backward = backward;
  return generate_family(InputFamily::normal, r);
}

// The first query row past the structural first rows that is (or is not) in `rows`.
std::size_t row_with(std::vector<std::size_t> const& rows, std::size_t total, bool in_sample) {
  for (std::size_t r = 5; r < total; ++r)
    if (std::binary_search(rows.begin(), rows.end(), r) == in_sample) return r;
  FAIL("no such row");
  return 0;
}

void check_same(CheckResult const& got, CheckResult const& want) {
  CHECK(got.pass == want.pass);
  CHECK(got.sampled == want.sampled);
  CHECK(got.screened_rows == want.screened_rows);
  CHECK(got.reference.sample.query_rows == want.reference.sample.query_rows);
  CHECK(got.reference.sample.key_rows == want.reference.sample.key_rows);
  CHECK(got.judgement.failing_query_rows == want.judgement.failing_query_rows);
  CHECK(got.judgement.failing_key_rows == want.judgement.failing_key_rows);
  REQUIRE(got.judgement.outputs.size() == want.judgement.outputs.size());
  for (std::size_t k = 0; k < got.judgement.outputs.size(); ++k) {
    CHECK(got.judgement.outputs[k].failing_elements == want.judgement.outputs[k].failing_elements);
    CHECK(got.judgement.outputs[k].worst_ratio == want.judgement.outputs[k].worst_ratio);
  }
  REQUIRE(got.worst_rows.size() == want.worst_rows.size());
  for (std::size_t k = 0; k < got.worst_rows.size(); ++k)
    CHECK(got.worst_rows[k].row == want.worst_rows[k].row);
  CHECK(got.notes == want.notes);
}

}  // namespace

// Prepare once, judge many: each output, judged by one prepared check after the others, gets exactly the
// result of a fresh run_check, including the outputs whose screen pulls rows outside the prepared sample
// (which must not leak into the verdicts that follow).
TEST_CASE("a prepared check judges many outputs as fresh checks would", "[numerics][check]") {
  for (bool backward : {false, true}) {
    INFO((backward ? "backward" : "forward"));
    FamilyInputs const f = sampled_inputs(backward);
    CheckOptions options;
    options.claimed = fl::common::Precision::fp16;
    options.sample_rows = 24;
    options.sample_key_rows = 8;
    PreparedCheck const prepared(f.inputs, options);
    REQUIRE(prepared.sampled());
    std::size_t const prepared_rows = prepared.sample().query_rows.size();
    std::size_t const d = std::size_t(f.inputs.shape.head_dim);
    std::size_t const total = query_rows(f.inputs.shape);

    AttentionOutputs const good = standard_attention(f.inputs, recipe_for(fl::common::Precision::fp16));
    std::size_t const in_row = row_with(prepared.sample().query_rows, total, true);
    std::size_t const off_row = row_with(prepared.sample().query_rows, total, false);
    std::vector<std::pair<std::string, AttentionOutputs>> outputs{{"correct", good}};
    auto planted = good;
    planted.o[in_row * d + 3] += 0.05;
    outputs.emplace_back("O off in a sampled row", planted);
    auto nan = good;
    nan.o[off_row * d] = std::numeric_limits<double>::quiet_NaN();
    outputs.emplace_back("NaN in an unsampled row", nan);
    outputs.emplace_back("correct again", good);
    if (backward) {
      auto bad_key = good;
      bad_key.dk[7 * d + 1] = std::numeric_limits<double>::infinity();
      outputs.emplace_back("inf in dK", bad_key);
    }

    std::vector<bool> passes;
    for (auto const& [what, out] : outputs) {
      INFO(what);
      CheckResult const got = prepared.judge(out);
      check_same(got, run_check(f.inputs, out, options));
      passes.push_back(got.pass);
    }
    CHECK(passes[0]);
    CHECK_FALSE(passes[1]);
    CHECK_FALSE(passes[2]);
    CHECK(passes[3]);
    // The NaN row (and a non-finite key row) is off the sample: those calls paid a new reference; the
    // prepared sample itself never grows.
    CHECK(prepared.resampled() == (backward ? 2u : 1u));
    CHECK(prepared.sample().query_rows.size() == prepared_rows);
  }
}

TEST_CASE("the base sample holds the structural rows and is drawn from the seed alone", "[numerics][check]") {
  fl::common::AttentionShape const s =
      make_shape(2, 2, 1, 50, 40, 16, true);  // causal, N_q > N_k: 10 masked rows a head
  RowSample const a = base_sample(s, true, 12, 6, 9);
  CHECK(a.query_rows == base_sample(s, true, 12, 6, 9).query_rows);
  CHECK(a.key_rows == base_sample(s, true, 12, 6, 9).key_rows);
  CHECK(std::is_sorted(a.query_rows.begin(), a.query_rows.end()));
  for (std::size_t head = 0; head < 4; ++head)
    for (std::size_t i : {0, 1, 9, 10, 11, 48, 49})  // edges, every masked row, the first rows that see a key
      CHECK(std::binary_search(a.query_rows.begin(), a.query_rows.end(), head * 50 + i));
  for (std::size_t head = 0; head < 2; ++head)
    for (std::size_t j : {0, 1, 38, 39})
      CHECK(std::binary_search(a.key_rows.begin(), a.key_rows.end(), head * 40 + j));
  CHECK(checks_every_row(s, false, 0));
  CHECK_FALSE(checks_every_row(s, false, 12));
  CHECK(checks_every_row(s, true, 12));
}
