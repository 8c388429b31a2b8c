#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "numerics/input_families.hpp"
#include "numerics/precision.hpp"
#include "numerics/reference.hpp"
#include "numerics/row_properties.hpp"
#include "tests/numerics/test_inputs.hpp"

using namespace fl::numerics;
using fl::numerics::test::make_shape;

namespace {

FamilyInputs make(InputFamily f, fl::common::AttentionShape shape, std::uint64_t seed = 1,
                  fl::common::Precision p = fl::common::Precision::bf16) {
  FamilyRequest r;
  r.shape = shape;
  r.seed = seed;
  r.precision = p;
  return generate_family(f, r);
}

std::vector<RowProperties> all_rows(AttentionInputs const& in) {
  std::vector<RowProperties> out;
  for (std::size_t r = 0; r < query_rows(in.shape); ++r) out.push_back(row_properties(in, r));
  return out;
}

}  // namespace

TEST_CASE("families are reproducible, named, and rounded to the storage precision", "[numerics][families]") {
  fl::common::AttentionShape const shape = make_shape(1, 2, 1, 40, 40, 16, false);
  for (InputFamily f : all_input_families()) {
    CHECK(parse_input_family(name(f)) == f);
    for (fl::common::Precision p :
         {fl::common::Precision::fp16, fl::common::Precision::bf16, fl::common::Precision::fp8_e4m3}) {
      FamilyInputs const a = make(f, shape, 5, p);
      FamilyInputs const b = make(f, shape, 5, p);
      FamilyInputs const c = make(f, shape, 6, p);
      CHECK(a.inputs.q == b.inputs.q);
      CHECK(a.inputs.d_o == b.inputs.d_o);
      CHECK(a.adversarial_rows == b.adversarial_rows);
      CHECK(a.inputs.v != c.inputs.v);
      fl::common::Precision const storage = fl::common::storage_precision(p);
      for (auto const* t : {&a.inputs.q, &a.inputs.k, &a.inputs.v, &a.inputs.d_o})
        for (double x : *t) {
          REQUIRE(std::isfinite(x));
          REQUIRE(double(round_to(storage, float(x))) == x);
        }
      REQUIRE_FALSE(a.adversarial_rows.empty());
      CHECK(std::is_sorted(a.adversarial_rows.begin(), a.adversarial_rows.end()));
      CHECK(a.adversarial_rows.back() < query_rows(a.inputs.shape));
      if (!a.adversarial_key_rows.empty()) CHECK(a.adversarial_key_rows.back() < key_rows(a.inputs.shape));
    }
  }
  CHECK_FALSE(parse_input_family("gaussian").has_value());
}

TEST_CASE("all_negative: every scaled score is below -100", "[numerics][families]") {
  for (int d : {16, 64, 128}) {
    FamilyInputs const f = make(InputFamily::all_negative, make_shape(1, 2, 2, 50, 70, d, true));
    for (RowProperties const& p : all_rows(f.inputs)) {
      REQUIRE_FALSE(p.fully_masked());
      CHECK(p.max_score < -100.0);
    }
  }
}

TEST_CASE("planted maxima sit in the first or the last key block, 8 above the rest", "[numerics][families]") {
  for (bool causal : {false, true}) {
    fl::common::AttentionShape const shape = make_shape(1, 2, 1, 100, 300, 32, causal);
    FamilyInputs const first = make(InputFamily::max_in_first_block, shape);
    FamilyInputs const last = make(InputFamily::max_in_last_block, shape);
    CHECK(first.adversarial_rows.size() == 200u);
    for (std::size_t r : first.adversarial_rows) {
      RowProperties const p = row_properties(first.inputs, r);
      CHECK(p.argmax_key < kFirstBlockKeys);
      CHECK(p.max_in_first_block(16));
      CHECK(p.max_score - p.second_max_score >= kPlantedMaxMargin - 0.5);  // minus the bf16 rounding of Q
    }
    for (std::size_t r : last.adversarial_rows) {
      RowProperties const p = row_properties(last.inputs, r);
      CHECK(p.argmax_key == p.visible_keys - 1);
      for (int block : {16, 64, 128, 256}) CHECK(p.max_in_last_block(block));
      CHECK(p.max_score - p.second_max_score >= kPlantedMaxMargin - 0.5);
    }
  }
}

TEST_CASE("fully_masked_rows: rows with no visible key, reference O = 0 and LSE = -inf",
          "[numerics][families]") {
  FamilyInputs const f = make(InputFamily::fully_masked_rows, make_shape(1, 1, 1, 40, 40, 16, false));
  fl::common::AttentionShape const& s = f.inputs.shape;
  CHECK(s.causal);
  CHECK(s.seqlen_k == 30);
  AttentionOutputs const ref = reference_attention(f.inputs);
  int masked = 0;
  for (RowProperties const& p : all_rows(f.inputs))
    if (p.fully_masked()) {
      ++masked;
      CHECK(std::binary_search(f.adversarial_rows.begin(), f.adversarial_rows.end(), p.row));
      CHECK(ref.lse[p.row] == -INFINITY);
      for (int e = 0; e < 16; ++e) CHECK(ref.o[p.row * 16 + std::size_t(e)] == 0.0);
    }
  CHECK(masked == 10);
}

TEST_CASE("ragged_tail: n is one past a multiple of every power-of-two block size", "[numerics][families]") {
  FamilyInputs const small = make(InputFamily::ragged_tail, make_shape(1, 1, 1, 64, 100, 16, false));
  CHECK(small.inputs.shape.seqlen_q == 65);
  CHECK(small.inputs.shape.seqlen_k == 97);
  FamilyInputs const big = make(InputFamily::ragged_tail, make_shape(1, 1, 1, 600, 600, 16, false));
  for (int block : {16, 32, 64, 128, 256}) CHECK(big.inputs.shape.seqlen_k % block == 1);
  // Scores are negative, so a padding key scored 0 would outweigh every real key.
  for (RowProperties const& p : all_rows(small.inputs)) CHECK(p.max_score < 0.0);
}

TEST_CASE("constant_rows, huge_dynamic_range, near_dtype_max, fa3_outliers have their property",
          "[numerics][families]") {
  fl::common::AttentionShape const shape = make_shape(1, 1, 1, 64, 64, 16, false);
  FamilyInputs const c = make(InputFamily::constant_rows, shape);
  for (std::size_t r : c.adversarial_rows) {
    RowProperties const p = row_properties(c.inputs, r);
    CHECK(p.max_score == p.min_score);
  }
  FamilyInputs const h = make(InputFamily::huge_dynamic_range, shape);
  double vmin = INFINITY, vmax = 0.0;
  for (double x : h.inputs.v) {
    vmin = std::min(vmin, std::fabs(x));
    vmax = std::max(vmax, std::fabs(x));
  }
  CHECK(vmax / vmin > 1e6);
  for (fl::common::Precision p : {fl::common::Precision::fp16, fl::common::Precision::fp8_e4m3}) {
    FamilyInputs const n = make(InputFamily::near_dtype_max, shape, 1, p);
    double const top = max_finite(p);
    for (double x : n.inputs.v) CHECK(std::fabs(x) >= 0.5 * top * (1 - 1e-2));
    for (double x : n.inputs.v) CHECK(std::fabs(x) <= top);
  }
  FamilyInputs const o = make(InputFamily::fa3_outliers, make_shape(1, 1, 1, 512, 512, 64, false));
  std::size_t big = 0;
  for (double x : o.inputs.k) big += std::fabs(x) > 6.0;
  CHECK(big > 5);  // ~0.001 * 32768 = 33 outliers, most of them beyond 6
  CHECK(big < 100);
}
