#include "tools/fa_mutate/gpu_mutant_runner.hpp"

#include <stdexcept>

#include "device/compile/compile_config.hpp"
#include "device/families/registry.hpp"
#include "device/run/run_once.hpp"
#include "numerics/gpu/kernel_check.hpp"
#include "numerics/gpu/kernel_fp8_operands.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "numerics/gpu/kernel_tensors.hpp"
#include "tools/fa_mutate/racecheck_probe.hpp"

namespace fl::tools::fa_mutate {

using namespace fl::device;

namespace mut = numerics::mutants;
using common::Precision;

namespace {

std::vector<float> to_float(std::vector<double> const& values) {
  return {values.begin(), values.end()};
}

}  // namespace

GpuMutantRunner::GpuMutantRunner(GpuMutantOptions options, FamilySource forward,
                                 std::optional<FamilySource> backward)
    : options_(std::move(options)),
      forward_(std::move(forward)),
      backward_(std::move(backward)),
      compiler_(options_.compile_db) {}

runtime::Result<std::unique_ptr<GpuMutantRunner>> GpuMutantRunner::create(GpuMutantOptions options) {
  auto family = find_family(options.family);
  if (!family)
    return runtime::Error{"input", "no kernel family " + options.family + " (known: " + family_names() + ")",
                          ""};
  auto forward = load_family_source(std::move(family), Direction::forward, options.kernels_dir);
  if (!forward) return forward.error();
  std::optional<FamilySource> backward;
  if (auto backward_family = find_family(options.family + "_bwd")) {
    auto loaded = load_family_source(std::move(backward_family), Direction::backward, options.kernels_dir);
    if (!loaded) return loaded.error();
    backward = std::move(loaded.value());
  }
  if (!options.racecheck) options.racecheck = discover_racecheck();
  return std::unique_ptr<GpuMutantRunner>(
      new GpuMutantRunner(std::move(options), std::move(forward.value()), std::move(backward)));
}

std::optional<mut::RaceToolReport> GpuMutantRunner::race_tool_check(mut::MutantId id, Precision precision,
                                                                    std::uint64_t seed) {
  bool const backward = runs_backward(id);
  Problem const problem{racecheck_shape(options_.head_dim), precision,
                        backward ? Direction::backward : Direction::forward};
  if (backward && !backward_) return std::nullopt;  // not applicable: the campaign never asks
  std::string const what = describe(problem) + " (" + std::string(family_for(problem).name()) + ")";
  RacecheckProbe probe;
  probe.request.precisions = {precision};
  probe.mutant = id;
  probe.seed = seed;
  RacecheckSetup const& setup = *options_.racecheck;
  RacecheckRun const mutant = run_racecheck(setup, racecheck_probe_arguments(options_, probe));
  std::optional<RacecheckRun> control;
  if (mutant.summary && mutant.summary->errors > 0) {
    auto const key = std::make_pair(precision, backward);
    auto known = racecheck_controls_.find(key);
    if (known == racecheck_controls_.end()) {
      probe.control = true;
      known =
          racecheck_controls_.emplace(key, run_racecheck(setup, racecheck_probe_arguments(options_, probe)))
              .first;
    }
    control = known->second;
  }
  return racecheck_report(mutant, control, what);
}

std::optional<std::string> GpuMutantRunner::equivalence_argument(mut::MutantId id, Precision) const {
  int classes = 0;
  for (auto const& [key, program] : programs_) {
    if (key.first != int(id)) continue;
    auto const correct = programs_.find({-1, key.second});
    if (correct == programs_.end() || correct->second.cubin != program.cubin) return std::nullopt;
    ++classes;
  }
  if (classes == 0) return std::nullopt;
  return "defining " + std::string(mut::info(id).switch_name) + " leaves the CUBIN bit-identical to the " +
         "correct kernel's in all " + std::to_string(classes) + " problem classes run: " + options_.family +
         " includes the line but never executes it";
}

Family const& GpuMutantRunner::family_for(Problem const& problem) const {
  if (problem.direction == Direction::backward) {
    if (!backward_) throw std::logic_error(options_.family + " has no backward family");
    return *backward_->family;
  }
  return *forward_.family;
}

Config GpuMutantRunner::config_for(Problem const& problem) const {
  // A backward runs its reproducible config: bwd-race is caught by reruns that must agree bit for bit, and
  // fa2_sm80_bwd's atomic-dQ configs (in its space, not its default) differ in the last bits run to run.
  if (problem.direction == Direction::backward) return family_for(problem).reproducible_config(problem);
  Family const& family = family_for(problem);
  Config const fallback = family.default_config(problem);
  // Only the tunables the family has: fa3_sm90 has no kBlockM (64 rows per consumer warpgroup), and a
  // kBlockM key it ignores would make the campaign size its problems, and the diagnosis replay, for the
  // wrong tiles.
  auto const has = [&](char const* name) {
    for (auto const& spec : family.parameters())
      if (spec.name == name) return true;
    return false;
  };
  Config both = fallback;
  if (options_.block_m > 0 && has("kBlockM")) both["kBlockM"] = options_.block_m;
  if (options_.block_n > 0 && has("kBlockN")) both["kBlockN"] = options_.block_n;
  if (!family.violates(both, problem)) return both;
  // The requested tiles may break a family's constraints (fa2_fp8's 8 warps need kBlockM >= 128). The key
  // block matters most: with the default kBlockN = 128 the campaign's n = 100 keys fit one block, where
  // unrescaled-o, unrescaled-l and normalize-in-loop cannot change anything (they survived fa2_fp8 on the
  // H200 that way). So keep the requested kBlockN if that alone is allowed; config_json records what ran.
  Config keys_only = fallback;
  if (options_.block_n > 0) keys_only["kBlockN"] = options_.block_n;
  return family.violates(keys_only, problem) ? fallback : keys_only;
}

mut::CampaignTiles GpuMutantRunner::largest_tiles(Precision precision,
                                                  common::AttentionShape const& base) const {
  mut::CampaignTiles tiles;
  auto widen = [&](Problem const& problem) {
    if (family_for(problem).unsupported(problem)) return;  // not run at all: not_applicable says why
    auto const [rows, keys] = family_for(problem).tile_rows_and_keys(config_for(problem), problem);
    tiles.block_m = std::max(tiles.block_m, rows);
    tiles.block_n = std::max(tiles.block_n, keys);
  };
  widen(Problem{base, precision, Direction::forward});
  if (backward_ && has_backward(precision)) widen(Problem{base, precision, Direction::backward});
  return tiles;
}

std::optional<std::string> GpuMutantRunner::config_violation(Problem const& problem) const {
  if (problem.direction == Direction::backward && !backward_) return options_.family + " has no backward";
  Family const& family = family_for(problem);
  if (auto why = family.unsupported(problem)) return why;
  Config const config = config_for(problem);
  if (auto why = family.violates(config, problem)) return to_string(config) + ": " + *why;
  return std::nullopt;
}

std::string GpuMutantRunner::config_json(std::optional<mut::MutantId> mutant,
                                         common::AttentionShape const& shape, Precision precision) const {
  Direction const direction = mutant && runs_backward(*mutant) ? Direction::backward : Direction::forward;
  Problem const problem{shape, precision, direction};
  if (direction == Direction::backward && !backward_) return "{}";
  std::string out = "{\"family\": \"" + std::string(family_for(problem).name()) + "\", \"arch\": \"" +
                    std::string(runtime::arch_name(options_.arch)) + "\"";
  for (auto const& [name, value] : config_for(problem)) out += ", \"" + name + "\": " + std::to_string(value);
  if (direction == Direction::backward) out += ", \"forward\": \"float64 reference O (rounded) and LSE\"";
  return out + "}";
}

runtime::Result<runtime::CompileRequest> GpuMutantRunner::compile_request(std::optional<mut::MutantId> mutant,
                                                                          Problem const& problem) const {
  device::CompileSpec spec{options_.arch, options_.kernels_dir, {}};
  if (mutant) spec.mutant_switches.emplace_back(mut::info(*mutant).switch_name);
  return device::make_family_request(family_for(problem), config_for(problem), problem, spec);
}

runtime::Result<runtime::CompiledProgram const*> GpuMutantRunner::program(std::optional<mut::MutantId> mutant,
                                                                          Problem const& problem) {
  std::string problem_class;
  for (auto const& expression : family_for(problem).name_expressions(config_for(problem), problem))
    problem_class += expression + ";";
  auto const key = std::make_pair(mutant ? int(*mutant) : -1, problem_class);
  if (auto it = programs_.find(key); it != programs_.end()) return &it->second;
  auto request = compile_request(mutant, problem);
  if (!request) return request.error();
  auto compiled = compiler_.compile(request.value());
  if (!compiled) return compiled.error();
  return &programs_.emplace(key, std::move(compiled->program)).first->second;
}

numerics::AttentionOutputs GpuMutantRunner::run_direction(std::optional<mut::MutantId> mutant,
                                                          numerics::AttentionInputs const& inputs,
                                                          Precision precision, Direction direction) {
  Problem const problem{inputs.shape, precision, direction};
  std::string const what = std::string(family_for(problem).name()) + " " +
                           (mutant ? std::string(mut::info(*mutant).name) : "correct") + " on " +
                           describe(problem);
  if (auto why = config_violation(problem)) throw std::runtime_error(what + ": " + *why);
  auto compiled = program(mutant, problem);
  if (!compiled)
    throw std::runtime_error(what + ": " + compiled.error().one_line() + "\n" + compiled.error().log);
  device::HostInputs host = numerics::gpu::to_host_inputs(inputs, precision);
  if (direction == Direction::forward) {
    std::optional<device::Fp8Operands> fp8;
    try {
      fp8 = numerics::gpu::fp8_operands_for(problem, host);
    } catch (std::invalid_argument const& e) {
      throw std::runtime_error(what + ": input: " + e.what());
    }
    auto out = device::run_once(family_for(problem), config_for(problem), problem, *compiled.value(), host,
                                nullptr, fp8 ? &*fp8 : nullptr);
    if (!out) throw std::runtime_error(what + ": " + out.error().one_line());
    return numerics::gpu::to_attention_outputs(out.value());
  }
  if (!inputs.has_backward()) throw std::runtime_error(what + ": the inputs carry no dO");
  host.d_o = to_float(inputs.d_o);
  // The forward the backward reads: the float64 reference's O (rounded to the dtype, as a kernel writes
  // it) and LSE, so that the gradients are judged on their own (as check_config does).
  device::HostOutputs const forward = numerics::gpu::reference_forward(problem, host);
  auto out =
      device::run_once(family_for(problem), config_for(problem), problem, *compiled.value(), host, &forward);
  if (!out) throw std::runtime_error(what + ": " + out.error().one_line());
  device::HostOutputs gradients = std::move(out.value());
  gradients.o = forward.o;
  gradients.lse = forward.lse;
  return numerics::gpu::to_attention_outputs(gradients);
}

numerics::AttentionOutputs GpuMutantRunner::run(std::optional<mut::MutantId> mutant,
                                                numerics::AttentionInputs const& inputs,
                                                Precision precision) {
  if (mutant && runs_backward(*mutant)) return run_direction(mutant, inputs, precision, Direction::backward);
  numerics::AttentionOutputs out = run_direction(mutant, inputs, precision, Direction::forward);
  // The correct variant's backward too: the baseline must show a false positive of either direction. A
  // forward mutant is judged on O and LSE alone (its gradients would only repeat the forward's error).
  if (!mutant && inputs.has_backward() && has_backward(precision)) {
    numerics::AttentionOutputs const backward = run_direction(mutant, inputs, precision, Direction::backward);
    out.dq = backward.dq;
    out.dk = backward.dk;
    out.dv = backward.dv;
  }
  return out;
}

}  // namespace fl::tools::fa_mutate