#include "numerics/fp8_study.hpp"

#include <chrono>
#include <cmath>

#include "numerics/emulator/emulator.hpp"
#include "numerics/judge.hpp"
#include "numerics/metrics.hpp"
#include "numerics/precision_recipe.hpp"
#include "numerics/quantized_operands.hpp"
#include "numerics/reference.hpp"
#include "numerics/seeded_random.hpp"
#include "numerics/standard_attention.hpp"

namespace fl::numerics {

namespace {

struct Variant {
  common::Precision precision;
  common::Fp8Scaling scaling;
  bool incoherent;
  Fp8Variants fp8 = {};
};

std::vector<Variant> variants() {
  std::vector<Variant> v = {{common::Precision::fp16, common::Fp8Scaling::per_tensor, false},
                            {common::Precision::bf16, common::Fp8Scaling::per_tensor, false}};
  for (common::Precision p : {common::Precision::fp8_e4m3, common::Precision::fp8_e5m2})
    for (common::Fp8Scaling s : {common::Fp8Scaling::per_tensor, common::Fp8Scaling::per_block})
      for (bool inc : {false, true}) v.push_back({p, s, inc});
  return v;
}

// The forward's variants: the above, then FlashAttention-3's recipe with each P variant asked for.
std::vector<Variant> forward_variants(std::vector<Fp8Variants> const& fp8_variants) {
  std::vector<Variant> v = variants();
  for (Fp8Variants set : fp8_variants)
    if (!set.is_fa3()) v.push_back({common::Precision::fp8_e4m3, common::Fp8Scaling::per_block, true, set});
  return v;
}

// Standard attention runs in the recipes of the paper's baselines only (fp16, bf16, FP8 per-tensor without
// incoherent processing): block scaling and the Hadamard rotation are FlashAttention-3 features.
bool has_baseline(Variant const& v) {
  return !is_fp8(v.precision) ||
         (v.scaling == common::Fp8Scaling::per_tensor && !v.incoherent && v.fp8.is_fa3());
}

PrecisionRecipe recipe_of(Variant const& v, int tile, std::uint64_t seed) {
  PrecisionRecipe r = recipe_for(v.precision);
  r.fp8_scaling = v.scaling;
  r.fp8_block_rows = tile;
  r.incoherent = v.incoherent;
  r.incoherent_seed = seed;
  return is_fp8(v.precision) ? with_fp8_variants(r, v.fp8) : r;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// RMSE and relative Frobenius error of `x` (packed rows) against `ref`.
std::pair<double, double> rmse_rel(std::vector<double> const& x, std::vector<double> const& ref) {
  ErrorMetrics const m = compute_metrics(x, ref);
  return {m.rmse, m.rel_frobenius};
}

FamilyInputs make_inputs(InputFamily recipe, int n, int d, std::uint64_t seed, bool backward) {
  FamilyRequest r;
  r.shape.batch = 1;
  r.shape.heads_q = 1;
  r.shape.heads_kv = 1;
  r.shape.seqlen_q = n;
  r.shape.seqlen_k = n;
  r.shape.head_dim = d;
  r.seed = seed;
  // Inputs as bf16 values: what FP8 kernels quantise from, and exactly representable in fp32 for the
  // fp16 rows' own rounding (fp16 rows round them again, as a kernel fed bf16 data converted would).
  r.precision = common::Precision::bf16;
  r.with_backward = backward;
  return generate_family(recipe, r);
}

}  // namespace

std::vector<Fp8Variants> default_fp8_study_variants() {
  std::vector<Fp8Variants> out;
  for (Fp8Variant v : kAllFp8Variants) out.push_back(Fp8Variants{}.with(v));
  out.push_back(Fp8Variants{}.with(Fp8Variant::two_term_q).with(Fp8Variant::two_term_v));
  out.push_back(Fp8Variants{}.with(Fp8Variant::two_term_q).with(Fp8Variant::bf16_pv));
  out.push_back(Fp8Variants{}.with(Fp8Variant::bf16_qk).with(Fp8Variant::two_term_v));
  return out;
}

std::string Fp8StudyRow::label() const {
  std::string s(name(precision));
  if (is_fp8(precision))
    s += std::string(" ") + std::string(name(scaling)) + (incoherent ? " incoherent" : "") +
         (fp8_variants.is_fa3() ? "" : " " + name(fp8_variants));
  return s;
}

std::vector<Fp8StudyRow> run_fp8_study(Fp8StudyOptions const& o,
                                       std::function<void(Fp8StudyRow const&)> const& progress) {
  std::vector<Fp8StudyRow> rows;
  auto emit = [&](Fp8StudyRow const& row) {
    rows.push_back(row);
    if (progress) progress(row);
  };
  emulator::EmulatorConfig config;
  config.tiles = {o.tile, o.tile};
  config.loop_order = emulator::LoopOrder::fa2;
  config.threads = o.threads;

  for (InputFamily recipe : o.recipes)
    for (int d : o.head_dims)
      for (int n : o.seqlens) {
        FamilyInputs const fi = make_inputs(recipe, n, d, o.seed, false);
        AttentionInputs const& in = fi.inputs;
        // Rows: all, or whole query tiles (one at a seeded random place, then the last). A problem of fewer
        // than two whole tiles has no random place to pick: all its rows (a sample of rows past n wrote
        // outside `selection`: fa-fp8-report --full-rows-up-to 1 --seqlens 16 corrupted the heap).
        RowSample sample;
        std::vector<std::uint8_t> selection(std::size_t(n), 0);
        if (n <= o.full_rows_limit || n / o.tile < 2) {
          sample = RowSample::all(in.shape, false);
        } else {
          SeededRandom rng(o.seed + std::uint64_t(n));
          int const tiles = n / o.tile;
          for (int t = 0; t < o.sampled_tiles; ++t) {
            int const tile =
                o.sampled_tiles > 1 && t + 1 == o.sampled_tiles ? tiles - 1 : rng.integer(0, tiles - 2);
            for (int i = tile * o.tile; i < (tile + 1) * o.tile; ++i)
              sample.query_rows.push_back(std::size_t(i));
          }
        }
        SampledOutputs const ref = reference_sampled(in, sample, {o.threads});
        for (std::size_t r : ref.sample.query_rows) selection[r] = 1;
        for (Variant const& v : forward_variants(o.fp8_variants)) {
          PrecisionRecipe const rc = recipe_of(v, o.tile, o.seed);
          for (std::string method : {"baseline", "tiled"}) {
            if (method == "baseline" && !has_baseline(v)) continue;
            auto const t0 = std::chrono::steady_clock::now();
            std::vector<double> out;
            if (method == "baseline") {
              out = standard_attention_sampled(in, rc, ref.sample, o.threads).o;
            } else {
              emulator::EmulatorConfig c = config;
              c.precision = v.precision;
              QuantizedOperands const ops = quantize_operands(in, rc);
              emulator::ForwardResult const f = emulator::emulate_forward(ops, rc, c, selection);
              AttentionOutputs const full = emulator::to_attention_outputs(f, nullptr, &ops);
              out = gather_rows(full.o, ref.sample.query_rows, std::size_t(d));
            }
            Fp8StudyRow row;
            row.pass = "forward";
            row.method = method;
            row.precision = v.precision;
            row.scaling = v.scaling;
            row.incoherent = v.incoherent;
            row.fp8_variants = v.fp8;
            row.recipe = recipe;
            row.head_dim = d;
            row.seqlen = n;
            row.rows = ref.sample.query_rows.size();
            std::tie(row.o_rmse, row.o_rel) = rmse_rel(out, ref.o);
            row.seconds = seconds_since(t0);
            emit(row);
          }
        }
      }

  for (InputFamily recipe : o.recipes)
    for (int d : o.backward_head_dims)
      for (int n : o.backward_seqlens) {
        FamilyInputs const fi = make_inputs(recipe, n, d, o.seed, true);
        AttentionInputs const& in = fi.inputs;
        AttentionOutputs const ref = reference_attention(in, {o.threads});
        for (Variant const& v : variants()) {
          PrecisionRecipe const rc = recipe_of(v, o.tile, o.seed);
          for (std::string method : {"baseline", "tiled"}) {
            if (method == "baseline" && !has_baseline(v)) continue;
            auto const t0 = std::chrono::steady_clock::now();
            AttentionOutputs out;
            if (method == "baseline") {
              out = standard_attention(in, rc, o.threads);
            } else {
              emulator::EmulatorConfig c = config;
              c.precision = v.precision;
              out = emulator::emulate(in, rc, c);
            }
            Fp8StudyRow row;
            row.pass = "backward";
            row.method = method;
            row.precision = v.precision;
            row.scaling = v.scaling;
            row.incoherent = v.incoherent;
            row.recipe = recipe;
            row.head_dim = d;
            row.seqlen = n;
            row.rows = std::size_t(n);
            std::tie(row.o_rmse, row.o_rel) = rmse_rel(out.o, ref.o);
            row.dq_rmse = rmse_rel(out.dq, ref.dq).first;
            row.dk_rmse = rmse_rel(out.dk, ref.dk).first;
            row.dv_rmse = rmse_rel(out.dv, ref.dv).first;
            row.seconds = seconds_since(t0);
            emit(row);
          }
        }
      }
  return rows;
}

}  // namespace fl::numerics
