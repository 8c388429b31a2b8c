// Why is bf16 P.V (fa3_sm90's kPvBf16: e4m3 Q, K per 128-row block after the rotation, keys last to first,
// P and V in bf16) worse at n = 2048 than at 4096-16384 on FlashAttention-3's outlier recipe, and does a
// cheap change of the Q/K quantisation bring n = 2048 to RMSE(O) <= 6e-3? Emulated (numerics' tiled emulator,
// FA-2 order, 128 x 128 tiles, every row), against the float64 reference. Built and run by run.sh.
//
// Output (stdout, CSV): n, seed, case, rmse, and for the kernel's recipe the share of the MSE by row class.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "numerics/emulator/emulator.hpp"
#include "numerics/input_families.hpp"
#include "numerics/metrics.hpp"
#include "numerics/precision_recipe.hpp"
#include "numerics/quantized_operands.hpp"
#include "numerics/reference.hpp"

using namespace fl::numerics;
using fl::common::Precision;

namespace {

constexpr int kD = 128;
constexpr int kTile = 128;  // the emulator's tiles and FA3's descale block

PrecisionRecipe kernel_recipe(int block_rows, std::uint64_t seed, Fp8Variants extra = {}) {
  PrecisionRecipe r = recipe_for(Precision::fp8_e4m3);
  r.fp8_scaling = fl::common::Fp8Scaling::per_block;
  r.fp8_block_rows = block_rows;
  r.incoherent = true;
  r.incoherent_seed = seed;
  Fp8Variants v = extra;
  v = v.with(Fp8Variant::reverse_keys).with(Fp8Variant::bf16_pv);
  return with_fp8_variants(r, v);
}

std::vector<double> forward_o(QuantizedOperands const& ops, PrecisionRecipe const& r) {
  emulator::EmulatorConfig c;
  c.precision = Precision::fp8_e4m3;
  c.tiles = {kTile, kTile};
  c.loop_order = emulator::LoopOrder::fa2;
  c.key_order = emulator::KeyOrder::last_to_first;
  c.threads = 2;
  return emulator::to_attention_outputs(emulator::emulate_forward(ops, r, c), nullptr, &ops).o;
}

double rmse(std::vector<double> const& x, std::vector<double> const& ref) {
  return compute_metrics(x, ref).rmse;
}

}  // namespace

// study FIRST_SEED LAST_SEED N[,N...] [EXTRAS]: the kernel's recipe for each seed and n, then the EXTRAS
// (comma-separated): "terms" (Q, K, both in bf16), "blocks" (finer Q/K descale blocks), "two_term_q".
int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s FIRST_SEED LAST_SEED N[,N...] [terms,blocks,two_term_q]\n", argv[0]);
    return 2;
  }
  int const first = std::atoi(argv[1]), last = std::atoi(argv[2]);
  std::vector<int> seqlens;
  for (char const* p = argv[3]; *p;) {
    seqlens.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  std::string const extras = argc > 4 ? argv[4] : "";
  auto const wants = [&](char const* what) { return extras.find(what) != std::string::npos; };
  std::printf("n,seed,case,value\n");
  for (int seed = first; seed <= last; ++seed)
    for (int n : seqlens) {
      FamilyRequest req;
      req.shape.batch = req.shape.heads_q = req.shape.heads_kv = 1;
      req.shape.seqlen_q = req.shape.seqlen_k = n;
      req.shape.head_dim = kD;
      req.seed = std::uint64_t(seed);
      req.precision = Precision::bf16;  // the values an FP8 kernel quantises (fa-fp8-report's inputs)
      req.with_backward = false;
      AttentionInputs const in = generate_family(InputFamily::fa3_outliers, req).inputs;
      SampledOutputs const ref = reference_sampled(in, RowSample::all(in.shape, false), {2});
      auto emit = [&](char const* name, std::vector<double> const& o) {
        std::printf("%d,%d,%s,%.4e\n", n, seed, name, rmse(o, ref.o));
        std::fflush(stdout);
      };
      PrecisionRecipe const kr = kernel_recipe(kTile, std::uint64_t(seed));
      QuantizedOperands const kernel = quantize_operands(in, kr);
      std::vector<double> const o = forward_o(kernel, kr);
      emit("kernel", o);

      // Where the kernel's squared error sits: rows by their largest reference weight max_j P_ij (a row
      // split between one outlier key and the bulk of the keys is where a score error moves O the most).
      {
        std::vector<double> row_mse(std::size_t(n), 0.0), row_pmax(std::size_t(n), 0.0);
        double total = 0.0;
        for (int i = 0; i < n; ++i) {
          double s = 0.0;
          for (int e = 0; e < kD; ++e)
            s += std::pow(o[std::size_t(i * kD + e)] - ref.o[std::size_t(i * kD + e)], 2);
          row_mse[std::size_t(i)] = s;
          total += s;
          double m = -1e300, l = 0.0;
          std::vector<double> sc(static_cast<std::size_t>(n));
          for (int j = 0; j < n; ++j) {
            double dot = 0.0;
            for (int e = 0; e < kD; ++e) dot += in.q[std::size_t(i * kD + e)] * in.k[std::size_t(j * kD + e)];
            sc[std::size_t(j)] = dot * in.shape.scale();
            m = std::max(m, sc[std::size_t(j)]);
          }
          for (double x : sc) l += std::exp(x - m);
          row_pmax[std::size_t(i)] = 1.0 / l;
        }
        double const edges[] = {0.0, 0.01, 0.1, 0.3, 0.7, 0.9, 1.01};
        for (int b = 0; b + 1 < 7; ++b) {
          double share = 0.0;
          int rows = 0;
          for (int i = 0; i < n; ++i)
            if (row_pmax[std::size_t(i)] >= edges[b] && row_pmax[std::size_t(i)] < edges[b + 1]) {
              share += row_mse[std::size_t(i)];
              ++rows;
            }
          std::printf("%d,%d,pmax_%.2f_%.2f rows,%d\n", n, seed, edges[b], edges[b + 1], rows);
          std::printf("%d,%d,pmax_%.2f_%.2f mse_share,%.4f\n", n, seed, edges[b], edges[b + 1],
                      share / total);
        }
        std::vector<double> sorted = row_mse;
        std::sort(sorted.rbegin(), sorted.rend());
        double top = 0.0;
        for (int i = 0; i < n / 100; ++i) top += sorted[std::size_t(i)];
        std::printf("%d,%d,top1pct_rows mse_share,%.4f\n", n, seed, top / total);
      }

      // Error terms: Q or K (or both) as bf16 values of the same rotated operands (u = 2^-8, 16x finer
      // than e4m3), the rest as the kernel has it.
      if (wants("terms")) {
        PrecisionRecipe const exact_qk =
            kernel_recipe(kTile, std::uint64_t(seed), Fp8Variants{}.with(Fp8Variant::bf16_qk));
        QuantizedOperands const fine = quantize_operands(in, exact_qk);
        QuantizedOperands mix = kernel;
        mix.q = fine.q;
        mix.q_descale = fine.q_descale;
        emit("q_bf16", forward_o(mix, kr));
        mix = kernel;
        mix.k = fine.k;
        mix.k_descale = fine.k_descale;
        emit("k_bf16", forward_o(mix, kr));
        emit("qk_bf16 (P V O rounding only)", forward_o(fine, exact_qk));
      }

      // Cheap candidates: finer descale blocks of Q (per 64 rows: one per consumer warpgroup; per row), of
      // K (64 rows: kBlockN 64; per row). A different P scale is moot with P in bf16.
      for (int rows : {64, 16, 1}) {
        if (!wants("blocks")) break;
        QuantizedOperands const f = quantize_operands(in, kernel_recipe(rows, std::uint64_t(seed)));
        QuantizedOperands mix = kernel;
        mix.q = f.q;
        mix.q_descale = f.q_descale;
        emit(("q_block_" + std::to_string(rows)).c_str(), forward_o(mix, kr));
        if (rows == 64 || rows == 1) {
          mix = kernel;
          mix.k = f.k;
          mix.k_descale = f.k_descale;
          emit(("k_block_" + std::to_string(rows)).c_str(), forward_o(mix, kr));
        }
      }
      PrecisionRecipe const tq =
          kernel_recipe(kTile, std::uint64_t(seed), Fp8Variants{}.with(Fp8Variant::two_term_q));
      if (wants("two_term_q")) emit("two_term_q", forward_o(quantize_operands(in, tq), tq));
    }
  return 0;
}
