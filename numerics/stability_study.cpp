#include "numerics/stability_study.hpp"

#include <chrono>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "numerics/emulator/emulator.hpp"
#include "numerics/emulator/prepared_problem.hpp"
#include "numerics/metrics.hpp"
#include "numerics/precision_recipe.hpp"
#include "numerics/quantized_operands.hpp"
#include "numerics/reference.hpp"
#include "numerics/seeded_random.hpp"
#include "numerics/standard_attention.hpp"

namespace fl::numerics {

void validate_stability_options(StabilityOptions const& o) {
  if (o.block_m < 1 || o.sampled_rows < o.block_m || o.sampled_rows % o.block_m != 0)
    throw std::invalid_argument("sampled rows " + std::to_string(o.sampled_rows) +
                                " must be a positive multiple of kBlockM = " + std::to_string(o.block_m));
  for (int n : o.seqlens) {
    if (auto complaint = common::out_of_range(kStabilitySeqlen, n)) throw std::invalid_argument(*complaint);
    if (n > o.full_rows_limit && n < 2 * o.sampled_rows)
      throw std::invalid_argument("n = " + std::to_string(n) + " is too small to sample " +
                                  std::to_string(o.sampled_rows) + " rows from");
  }
  for (int bn : o.block_ns)
    if (bn < 1 || bn > emulator::kMaxTile)
      throw std::invalid_argument("kBlockN = " + std::to_string(bn) + " outside 1.." +
                                  std::to_string(emulator::kMaxTile));
}

// Rows of one problem: all, or sampled_rows contiguous rows starting at a seeded multiple of block_m.
RowSample stability_rows(StabilityOptions const& o, common::AttentionShape const& shape, int n) {
  if (n <= o.full_rows_limit) return RowSample::all(shape, false);
  SeededRandom rng(o.seed + std::uint64_t(n));
  int const blocks = (n - o.sampled_rows) / o.block_m;
  int const first = rng.integer(0, blocks) * o.block_m;
  RowSample sample;
  for (int i = first; i < first + o.sampled_rows; ++i) sample.query_rows.push_back(std::size_t(i));
  return sample;
}

AttentionInputs stability_inputs(StabilityOptions const& o, InputFamily family, common::Precision precision,
                                 int n) {
  FamilyRequest request;
  request.shape.seqlen_q = n;
  request.shape.seqlen_k = n;
  request.shape.head_dim = o.head_dim;
  request.seed = o.seed;
  request.precision = precision;  // values exact in the claimed precision: only the arithmetic deviates
  request.with_backward = false;
  return generate_family(family, request).inputs;
}

std::string stability_csv_header() {
  return "family,precision,output,method,block_n,seqlen,head_dim,rows,max_abs,rmse,rel_frobenius,seconds,"
         "source\n";
}

std::string stability_csv_line(StabilityRow const& r, int head_dim, std::string const& source) {
  std::ostringstream line;
  line << std::setprecision(9) << name(r.family) << "," << name(r.precision) << "," << name(r.output) << ","
       << r.method << "," << r.block_n << "," << r.seqlen << "," << head_dim << "," << r.rows << ","
       << r.max_abs << "," << r.rmse << "," << r.rel_frobenius << "," << r.seconds << "," << source << "\n";
  return line.str();
}

std::vector<StabilityRow> run_stability_study(StabilityOptions const& o,
                                              std::function<void(StabilityRow const&)> const& progress) {
  validate_stability_options(o);
  std::vector<StabilityRow> rows;
  auto emit = [&](StabilityRow row, std::vector<double> const& out, std::vector<double> const& ref,
                  std::chrono::steady_clock::time_point t0) {
    ErrorMetrics const m = compute_metrics(out, ref);
    row.max_abs = m.max_abs;
    row.rmse = m.rmse;
    row.rel_frobenius = m.rel_frobenius;
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rows.push_back(row);
    if (progress) progress(rows.back());
  };
  auto const d = std::size_t(o.head_dim);
  for (InputFamily family : o.families)
    for (common::Precision precision : o.precisions)
      for (int n : o.seqlens) {
        AttentionInputs const in = stability_inputs(o, family, precision, n);
        SampledOutputs const ref = reference_sampled(in, stability_rows(o, in.shape, n), {o.threads});
        for (common::Precision output : {precision, common::Precision::fp32}) {
          PrecisionRecipe recipe = recipe_for(precision);
          recipe.outputs = output;
          StabilityRow base;
          base.family = family;
          base.precision = precision;
          base.output = output;
          base.seqlen = n;
          base.rows = ref.sample.query_rows.size();

          auto t0 = std::chrono::steady_clock::now();
          StabilityRow standard = base;
          standard.method = "standard";
          emit(standard, standard_attention_sampled(in, recipe, ref.sample, o.threads).o, ref.o, t0);

          QuantizedOperands const ops = quantize_operands(in, recipe);
          std::vector<std::uint8_t> selection(std::size_t(n), 0);
          for (std::size_t r : ref.sample.query_rows) selection[r] = 1;
          for (int block_n : o.block_ns) {
            t0 = std::chrono::steady_clock::now();
            emulator::EmulatorConfig config;
            config.precision = precision;
            config.tiles = {o.block_m, block_n};
            config.threads = o.threads;
            emulator::ForwardResult const f = emulator::emulate_forward(ops, recipe, config, selection);
            std::vector<double> out;
            out.reserve(ref.sample.query_rows.size() * d);
            for (std::size_t r : ref.sample.query_rows)
              for (std::size_t e = 0; e < d; ++e) out.push_back(f.o[r * d + e]);
            StabilityRow tiled = base;
            tiled.method = "tiled";
            tiled.block_n = block_n;
            emit(tiled, out, ref.o, t0);
          }
          if (precision == common::Precision::fp32) break;  // fp32 output is the claimed one
        }
      }
  return rows;
}

}  // namespace fl::numerics
