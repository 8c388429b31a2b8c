#include "tuner/run/stability_gpu_study.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "device/run/run_once.hpp"
#include "numerics/metrics.hpp"
#include "tuner/run/benchmark.hpp"

namespace fl::tuner {

namespace {
constexpr char const* kBlockNParam = "kBlockN";

// The kBlockN values of the family's search space (empty when it has none).
std::vector<int> block_n_space(device::Family const& family) {
  for (device::ParamSpec const& spec : family.parameters())
    if (spec.name == kBlockNParam) return spec.values;
  return {};
}
}  // namespace

runtime::Result<std::string> run_stability_gpu_study(
    device::Family const& family, device::CompileSpec const& spec, numerics::StabilityOptions const& o,
    std::string const& source, std::function<void(std::string const&)> const& progress) {
  numerics::validate_stability_options(o);
  std::string csv = numerics::stability_csv_header();
  auto emit = [&](std::string const& line) {
    if (line[0] != '#') csv += line;
    if (progress) progress(line);
  };
  std::map<std::string, runtime::CompiledProgram> programs;  // by precision and config
  std::vector<int> const space = block_n_space(family);
  for (auto input_family : o.families)
    for (auto precision : o.precisions)
      for (int n : o.seqlens) {
        auto const inputs = numerics::stability_inputs(o, input_family, precision, n);
        auto const sample = numerics::stability_rows(o, inputs.shape, n);
        auto const ref = numerics::reference_sampled(inputs, sample, {o.threads});
        device::Problem p;
        p.shape = inputs.shape;
        p.dtype = precision;
        if (auto why = family.unsupported(p)) return runtime::Error{"input", *why, ""};
        device::Config const defaults = family.default_config(p);
        bool const tiled = defaults.contains(kBlockNParam);
        device::HostInputs const host{{inputs.q.begin(), inputs.q.end()},
                                      {inputs.k.begin(), inputs.k.end()},
                                      {inputs.v.begin(), inputs.v.end()},
                                      {},
                                      nullptr,
                                      common::storage_precision(precision)};
        for (int block_n : tiled ? o.block_ns : std::vector<int>{0}) {
          device::Config config = defaults;
          if (tiled) config[kBlockNParam] = block_n;
          if (tiled && std::find(space.begin(), space.end(), block_n) == space.end()) {
            emit("# " + std::string(family.name()) + " kBlockN " + std::to_string(block_n) +
                 " skipped: not in its space\n");
            continue;
          }
          if (auto why = family.violates(config, p)) {
            emit("# " + std::string(family.name()) + " kBlockN " + std::to_string(block_n) +
                 " skipped: " + *why + "\n");
            continue;
          }
          auto const t0 = std::chrono::steady_clock::now();
          std::string const key = std::string(common::name(precision)) + " " + device::to_string(config);
          if (!programs.count(key)) {
            auto program = device::compile_family_config(family, config, p, spec);
            if (!program) return program.error();
            programs.emplace(key, std::move(program.value()));
          }
          auto const fp8 = fp8_operands_of(p, host);
          if (!fp8) return fp8.error();
          auto out = device::run_once(family, config, p, programs.at(key), host, nullptr,
                                      fp8->has_value() ? &**fp8 : nullptr);
          if (!out) return out.error();
          auto const d = std::size_t(o.head_dim);
          std::vector<double> got;
          got.reserve(sample.query_rows.size() * d);
          for (std::size_t r : sample.query_rows)
            for (std::size_t e = 0; e < d; ++e) got.push_back(out->o[r * d + e]);
          auto const m = numerics::compute_metrics(got, ref.o);
          numerics::StabilityRow row;
          row.family = input_family;
          row.precision = precision;
          row.output = precision;  // the kernels write O in the input type
          row.method = std::string(family.name());
          row.block_n = block_n;
          row.seqlen = n;
          row.rows = sample.query_rows.size();
          row.max_abs = m.max_abs;
          row.rmse = m.rmse;
          row.rel_frobenius = m.rel_frobenius;
          row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          std::string config_text = device::to_string(config);  // commas would split the CSV field
          for (char& c : config_text)
            if (c == ',') c = ';';
          emit(numerics::stability_csv_line(row, o.head_dim, source + " " + config_text));
        }
      }
  return csv;
}

}  // namespace fl::tuner
