// quantize_operands quantises a large problem's Q, K and V side by side: each must be what quantising that
// tensor alone gives, to the bit (the emulators, the tolerance model and fa-tune's FP8 operands read them).
#include <catch2/catch.hpp>

#include "numerics/fp8_quantization.hpp"
#include "numerics/incoherent_processing.hpp"
#include "numerics/precision_recipe.hpp"
#include "numerics/quantized_operands.hpp"
#include "numerics/seeded_random.hpp"

using namespace fl::numerics;
using fl::common::Fp8Scaling;
using fl::common::Precision;

namespace {

std::vector<double> normals(std::size_t n, std::uint64_t seed) {
  SeededRandom rng(seed);
  std::vector<double> x(n);
  for (double& v : x) v = rng.normal();
  return x;
}

// Each tensor's codes and per-row descales as quantize_fp8 gives them for that tensor alone.
void check_alone(std::vector<double> const& x, int matrices, int rows, int cols, PrecisionRecipe const& r,
                 std::vector<float> const& codes, std::vector<float> const& descale) {
  Fp8Tensor const alone = quantize_fp8(x, matrices, rows, cols, r.operands, r.fp8_scaling, r.fp8_block_rows);
  CHECK(codes == alone.codes);
  REQUIRE(descale.size() == std::size_t(matrices) * std::size_t(rows));
  bool same = true;
  for (std::size_t row = 0; row < descale.size(); ++row)
    same = same && descale[row] == alone.descale_of_row(row);
  CHECK(same);
}

}  // namespace

TEST_CASE("a large problem's Q K and V quantised side by side are each quantised alone", "[numerics][fp8]") {
  AttentionInputs in;
  in.shape = {1, 4, 2, 2048, 2048, 128, false, 0.0};  // Q: 2^20 elements, quantised side by side
  in.q = normals(in.shape.q_elements(), 1);
  in.k = normals(in.shape.kv_elements(), 2);
  in.v = normals(in.shape.kv_elements(), 3);
  for (bool incoherent : {false, true}) {
    PrecisionRecipe r = recipe_for(Precision::fp8_e4m3);
    r.fp8_scaling = incoherent ? Fp8Scaling::per_tensor : Fp8Scaling::per_block;
    r.incoherent = incoherent;
    r.incoherent_seed = 7;
    INFO((incoherent ? "incoherent, per tensor" : "per block"));
    auto const out = quantize_operands(in, r);
    std::vector<double> q = in.q, k = in.k;
    if (incoherent) {
      auto const t = make_incoherent_transform(in.shape.head_dim, r.incoherent_seed);
      apply_incoherent(t, q);
      apply_incoherent(t, k);
    }
    auto const& s = in.shape;
    check_alone(q, s.batch * s.heads_q, s.seqlen_q, s.head_dim, r, out.q, out.q_descale);
    check_alone(k, s.batch * s.heads_kv, s.seqlen_k, s.head_dim, r, out.k, out.k_descale);
    check_alone(in.v, s.batch * s.heads_kv, s.seqlen_k, s.head_dim, r, out.v, out.v_descale);
  }
}
