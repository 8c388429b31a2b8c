#include "tuner/run/fp8_error_study.hpp"

#include <cstdio>
#include <map>
#include <tuple>

#include "numerics/metrics.hpp"
#include "numerics/reference.hpp"
#include "numerics/seeded_random.hpp"
#include "tuner/run/run_once.hpp"

namespace fl::tuner {

namespace {

struct Variant {
  common::Precision precision;
  numerics::Fp8Scaling scaling;
  bool incoherent;
  std::string label() const {
    return std::string(common::name(precision)) + " " + std::string(numerics::name(scaling)) +
           (incoherent ? " incoherent" : "");
  }
};

std::vector<Variant> fp8_variants() {
  std::vector<Variant> out;
  for (auto p : {common::Precision::fp8_e4m3, common::Precision::fp8_e5m2})
    for (auto s : {numerics::Fp8Scaling::per_tensor, numerics::Fp8Scaling::per_block})
      for (bool inc : {false, true}) out.push_back({p, s, inc});
  return out;
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

std::string fp8_error_study_header() {
  return "pass,method,variant,precision,scaling,incoherent,recipe,head_dim,seqlen,rows,o_rmse,o_rel,dq_rmse,"
         "dk_rmse,dv_rmse,seconds,source\n";
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

runtime::Result<std::string> run_fp8_error_study(Family const& family, CompileSpec const& spec,
                                                 Fp8ErrorStudyOptions const& o,
                                                 std::function<void(std::string const&)> const& progress) {
  std::string csv = fp8_error_study_header();
  // One program per (dtype, head dim, scaling): the kernel instance does not depend on n or the recipe.
  std::map<std::tuple<int, int, int>, runtime::CompiledProgram> programs;
  for (auto recipe : o.recipes)
    for (int d : o.head_dims)
      for (int n : o.seqlens) {
        auto const inputs = study_inputs(recipe, n, d, o.seed);
        numerics::RowSample sample;
        sample.query_rows = fp8_study_rows(n, o);
        auto const ref = numerics::reference_sampled(inputs, sample);
        HostInputs host{{inputs.q.begin(), inputs.q.end()},
                        {inputs.k.begin(), inputs.k.end()},
                        {inputs.v.begin(), inputs.v.end()},
                        {},
                        nullptr};
        for (auto const& v : fp8_variants()) {
          Problem p;
          p.shape = inputs.shape;
          p.dtype = v.precision;
          p.fp8.scaling = v.scaling;
          p.fp8.block_rows = o.tile;
          p.fp8.incoherent = v.incoherent;
          p.fp8.incoherent_seed = o.seed;
          if (auto why = family.unsupported(p)) return runtime::Error{"input", *why, ""};
          Config const config = family.default_config(p);
          auto const key = std::tuple{int(v.precision), d, int(v.scaling)};
          if (!programs.count(key)) {
            auto program = compile_family_config(family, config, p, spec);
            if (!program) return program.error();
            programs.emplace(key, std::move(program.value()));
          }
          auto out = run_once(family, config, p, programs.at(key), host);
          if (!out) return out.error();
          std::size_t const dd = std::size_t(d);
          std::vector<double> got(sample.query_rows.size() * dd);
          for (std::size_t t = 0; t < sample.query_rows.size(); ++t)
            for (std::size_t e = 0; e < dd; ++e) got[t * dd + e] = out->o[sample.query_rows[t] * dd + e];
          auto const m = numerics::compute_metrics(got, ref.o);
          std::string config_text = to_string(config);  // commas would split the CSV field
          for (char& c : config_text)
            if (c == ',') c = ';';
          char line[512];
          std::snprintf(line, sizeof line, "forward,gpu,%s,%s,%s,%d,%s,%d,%d,%zu,%g,%g,0,0,0,0,%s %s\n",
                        v.label().c_str(), std::string(common::name(v.precision)).c_str(),
                        std::string(numerics::name(v.scaling)).c_str(), v.incoherent ? 1 : 0,
                        std::string(numerics::name(recipe)).c_str(), d, n, sample.query_rows.size(), m.rmse,
                        m.rel_frobenius, o.source.c_str(), config_text.c_str());
          csv += line;
          if (progress) progress(line);
        }
      }
  return csv;
}

}  // namespace fl::tuner
