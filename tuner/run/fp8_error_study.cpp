#include "tuner/run/fp8_error_study.hpp"

#include <cstdio>
#include <map>
#include <tuple>

#include "device/run/run_once.hpp"
#include "numerics/emulator/emulator.hpp"
#include "numerics/gpu/kernel_check.hpp"
#include "numerics/judge.hpp"
#include "numerics/metrics.hpp"
#include "numerics/quantized_operands.hpp"
#include "numerics/reference.hpp"
#include "numerics/seeded_random.hpp"
#include "tuner/run/benchmark.hpp"

namespace fl::tuner {

namespace {

struct Variant {
  common::Precision precision;
  common::Fp8Scaling scaling;
  bool incoherent;
  bool bf16_pv;
};

// The 8 FP8 recipes; bf16_pv: FlashAttention-3's (e4m3, per block, incoherent) with P V in FP8 and in bf16.
std::vector<Variant> fp8_variants(bool bf16_pv) {
  auto const e4m3 = common::Precision::fp8_e4m3;
  if (bf16_pv)
    return {{e4m3, common::Fp8Scaling::per_block, true, false},
            {e4m3, common::Fp8Scaling::per_block, true, true}};
  std::vector<Variant> out;
  for (auto p : {e4m3, common::Precision::fp8_e5m2})
    for (auto s : {common::Fp8Scaling::per_tensor, common::Fp8Scaling::per_block})
      for (bool inc : {false, true}) out.push_back({p, s, inc, false});
  return out;
}

// The emulator's O on `rows` for what `family` computes with `config`: the operands of the problem (bf16 V
// with bf16_pv), its recipe, its key block and key order. bf16_pv runs on fa3_sm90 only, which walks its
// key blocks last to first (kernels_src/fa3_sm90_fwd.cu): the emulator's reverse_keys.
std::vector<double> emulated_o(device::Family const& family, device::Config const& config,
                               device::Problem const& p, numerics::AttentionInputs const& in,
                               std::vector<std::size_t> const& rows) {
  numerics::PrecisionRecipe recipe = numerics::gpu::operand_recipe_of(p);
  recipe = numerics::with_fp8_variants(recipe, recipe.fp8_variants.with(numerics::Fp8Variant::reverse_keys));
  auto const ops = numerics::quantize_operands(in, recipe);
  numerics::emulator::EmulatorConfig c;
  c.precision = p.dtype;
  auto const [block_m, block_n] = family.tile_rows_and_keys(config, p);
  c.tiles = {block_m, block_n};
  c.loop_order = numerics::emulator::LoopOrder::fa2;
  std::vector<std::uint8_t> selection(std::size_t(p.shape.seqlen_q), 0);
  for (std::size_t r : rows) selection[r] = 1;
  auto const f = numerics::emulator::emulate_forward(ops, recipe, c, selection);
  auto const full = numerics::emulator::to_attention_outputs(f, nullptr, &ops);
  return numerics::gather_rows(full.o, rows, std::size_t(p.shape.head_dim));
}

// numerics/fp8_study.cpp's make_inputs: B = H = 1, non-causal, values stored as bf16.
numerics::AttentionInputs study_inputs(numerics::InputFamily recipe, int n, int d, std::uint64_t seed) {
  numerics::FamilyRequest r;
  r.shape.batch = r.shape.heads_q = r.shape.heads_kv = 1;
  r.shape.seqlen_q = r.shape.seqlen_k = n;
  r.shape.head_dim = d;
  r.seed = seed;
  r.precision = common::Precision::bf16;
  r.with_backward = false;
  return numerics::generate_family(recipe, r).inputs;
}

}  // namespace

std::string Fp8ErrorStudyRow::label() const {
  return std::string(common::name(precision)) + " " + std::string(common::name(scaling)) +
         (incoherent ? " incoherent" : "") + (bf16_pv ? " bf16_pv" : "");
}

std::string fp8_error_study_header() {
  return "pass,method,variant,precision,scaling,incoherent,recipe,head_dim,seqlen,rows,o_rmse,o_rel,dq_rmse,"
         "dk_rmse,dv_rmse,seconds,source\n";
}

std::string csv_line(Fp8ErrorStudyRow const& r, std::string const& source) {
  char line[512];
  std::snprintf(line, sizeof line, "forward,%s,%s,%s,%s,%d,%s,%d,%d,%zu,%g,%g,0,0,0,0,%s%s %s\n",
                r.method.c_str(), r.label().c_str(), std::string(common::name(r.precision)).c_str(),
                std::string(common::name(r.scaling)).c_str(), r.incoherent ? 1 : 0,
                std::string(numerics::name(r.recipe)).c_str(), r.head_dim, r.seqlen, r.rows, r.o_rmse,
                r.o_rel, r.method == "emulated" ? "emulated for " : "", source.c_str(), r.config.c_str());
  return line;
}

std::vector<std::size_t> fp8_study_rows(int n, Fp8ErrorStudyOptions const& o) {
  std::vector<std::size_t> rows;
  if (n <= o.full_rows_limit) {
    for (int i = 0; i < n; ++i) rows.push_back(std::size_t(i));
    return rows;
  }
  // One sampled tile (the study's default sampled_tiles = 1), drawn exactly as numerics draws it.
  numerics::SeededRandom rng(o.seed + std::uint64_t(n));
  int const tiles = n / o.tile;
  int const tile = rng.integer(0, tiles - 2);
  for (int i = tile * o.tile; i < (tile + 1) * o.tile; ++i) rows.push_back(std::size_t(i));
  return rows;
}

runtime::Result<std::vector<Fp8ErrorStudyRow>> run_fp8_error_study_rows(
    device::Family const& family, device::CompileSpec const& spec, Fp8ErrorStudyOptions const& o,
    std::function<void(Fp8ErrorStudyRow const&)> const& progress) {
  std::vector<Fp8ErrorStudyRow> out;
  auto emit = [&](Fp8ErrorStudyRow const& row) {
    out.push_back(row);
    if (progress) progress(row);
  };
  // One program per (dtype, head dim, scaling, P V precision): the kernel does not depend on n or the recipe.
  std::map<std::tuple<int, int, int, bool>, runtime::CompiledProgram> programs;
  for (auto recipe : o.recipes)
    for (int d : o.head_dims)
      for (int n : o.seqlens) {
        auto const inputs = study_inputs(recipe, n, d, o.seed);
        numerics::RowSample sample;
        sample.query_rows = fp8_study_rows(n, o);
        auto const ref = numerics::reference_sampled(inputs, sample);
        device::HostInputs host{{inputs.q.begin(), inputs.q.end()},
                                {inputs.k.begin(), inputs.k.end()},
                                {inputs.v.begin(), inputs.v.end()},
                                {},
                                nullptr,
                                common::Precision::bf16};  // every FP8 variant's storage precision
        for (auto const& v : fp8_variants(o.bf16_pv)) {
          device::Problem p;
          p.shape = inputs.shape;
          p.dtype = v.precision;
          p.fp8.scaling = v.scaling;
          p.fp8.block_rows = o.tile;
          p.fp8.incoherent = v.incoherent;
          p.fp8.incoherent_seed = o.seed;
          p.fp8.bf16_pv = v.bf16_pv;
          if (auto why = family.unsupported(p)) return runtime::Error{"input", *why, ""};
          device::Config const config = family.default_config(p);
          auto const key = std::tuple{int(v.precision), d, int(v.scaling), v.bf16_pv};
          if (!programs.count(key)) {
            auto program = device::compile_family_config(family, config, p, spec);
            if (!program) return program.error();
            programs.emplace(key, std::move(program.value()));
          }
          auto const fp8 = fp8_operands_of(p, host);
          if (!fp8) return fp8.error();
          auto result = device::run_once(family, config, p, programs.at(key), host, nullptr,
                                         fp8->has_value() ? &**fp8 : nullptr);
          if (!result) return result.error();
          std::size_t const dd = std::size_t(d);
          std::vector<double> got(sample.query_rows.size() * dd);
          for (std::size_t t = 0; t < sample.query_rows.size(); ++t)
            for (std::size_t e = 0; e < dd; ++e) got[t * dd + e] = result->o[sample.query_rows[t] * dd + e];
          Fp8ErrorStudyRow row;
          row.method = "gpu";
          row.precision = v.precision;
          row.scaling = v.scaling;
          row.incoherent = v.incoherent;
          row.bf16_pv = v.bf16_pv;
          row.recipe = recipe;
          row.head_dim = d;
          row.seqlen = n;
          row.rows = sample.query_rows.size();
          auto const m = numerics::compute_metrics(got, ref.o);
          row.o_rmse = m.rmse;
          row.o_rel = m.rel_frobenius;
          row.config = device::to_string(config);  // commas would split the CSV field
          for (char& c : row.config)
            if (c == ',') c = ';';
          emit(row);
          if (!o.bf16_pv) continue;
          auto const e =
              numerics::compute_metrics(emulated_o(family, config, p, inputs, sample.query_rows), ref.o);
          row.method = "emulated";
          row.o_rmse = e.rmse;
          row.o_rel = e.rel_frobenius;
          emit(row);
        }
      }
  return out;
}

runtime::Result<std::string> run_fp8_error_study(device::Family const& family,
                                                 device::CompileSpec const& spec,
                                                 Fp8ErrorStudyOptions const& o,
                                                 std::function<void(std::string const&)> const& progress) {
  std::string csv = fp8_error_study_header();
  auto rows = run_fp8_error_study_rows(family, spec, o, [&](Fp8ErrorStudyRow const& row) {
    std::string const line = csv_line(row, o.source);
    csv += line;
    if (progress) progress(line);
  });
  if (!rows) return rows.error();
  return csv;
}

}  // namespace fl::tuner
