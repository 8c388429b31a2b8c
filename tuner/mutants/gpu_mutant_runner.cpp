#include "tuner/mutants/gpu_mutant_runner.hpp"

#include <stdexcept>

#include "runtime/kernel_source.hpp"
#include "tuner/compile/compile_config.hpp"
#include "tuner/families/registry.hpp"
#include "tuner/run/attention_io.hpp"
#include "tuner/run/run_once.hpp"

namespace fl::tuner {

namespace mut = numerics::mutants;
using numerics::Precision;

namespace {

// bwd-race: a missing barrier lets some warps read a shared-memory tile that others are still
// overwriting; whether that changes a bit depends on the warp interleaving of the run. Each extra run is
// one more interleaving compared with the first: 4 comparisons per input, over the ~20 inputs of a
// campaign, catch a race that shows in even 1 run in 20 with probability 1 - (19/20)^80 > 98%, while a
// race-free kernel (deterministic by construction, no atomics) never differs. On the campaign's small
// problems a backward run takes well under a millisecond, so the 5x costs nothing noticeable.
constexpr int kRaceRepeats = 5;

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

Problem representative_problem() {
  Problem p;
  p.dtype = Precision::bf16;
  p.direction = Direction::forward;
  return p;
}

}  // namespace

bool source_has_switch(std::string_view text, std::string_view switch_name) {
  std::size_t line_start = 0;
  while (line_start < text.size()) {
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view const line = text.substr(line_start, line_end - line_start);
    std::size_t const first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line[first] == '#') {
      std::string_view const directive =
          line.substr(0, line.find("//"));  // a trailing comment does not count
      for (std::size_t at = directive.find(switch_name); at != std::string_view::npos;
           at = directive.find(switch_name, at + 1)) {
        std::size_t const after = at + switch_name.size();
        bool const starts = at == 0 || !is_identifier_char(directive[at - 1]);
        bool const ends = after == directive.size() || !is_identifier_char(directive[after]);
        if (starts && ends) return true;
      }
    }
    line_start = line_end + 1;
  }
  return false;
}

GpuMutantRunner::GpuMutantRunner(GpuMutantOptions options, std::unique_ptr<Family> family,
                                 std::string source_text, std::string source_files)
    : options_(std::move(options)),
      family_(std::move(family)),
      source_text_(std::move(source_text)),
      source_files_(std::move(source_files)),
      compiler_(options_.compile_db) {}

runtime::Result<std::unique_ptr<GpuMutantRunner>> GpuMutantRunner::create(GpuMutantOptions options) {
  auto family = find_family(options.family);
  if (!family)
    return runtime::Error{"input", "no kernel family " + options.family + " (known: " + family_names() + ")",
                          ""};
  auto source =
      runtime::load_kernel_source(family->source_file(representative_problem()), options.kernels_dir);
  if (!source) return source.error();
  std::string text = source->main.text;
  for (auto const& header : source->includes) text += "\n" + header.text;
  std::string files = source->main.path;
  if (!source->includes.empty())
    files += " and the " + std::to_string(source->includes.size()) + " kernels_src headers it includes";
  return std::unique_ptr<GpuMutantRunner>(
      new GpuMutantRunner(std::move(options), std::move(family), std::move(text), std::move(files)));
}

std::optional<std::string> GpuMutantRunner::unsupported_precision(Precision precision) const {
  Problem p = representative_problem();
  p.dtype = precision;
  return family_->unsupported(p);
}

std::optional<std::string> GpuMutantRunner::not_applicable(mut::MutantId id, Precision precision) const {
  mut::MutantInfo const& m = mut::info(id);
  if (m.kind == mut::MutantKind::fp8) {
    if (auto why = unsupported_precision(Precision::fp8_e4m3))
      return "FP8 only, and " + options_.family + " has no FP8 path (" + *why + ")";
    if (!numerics::is_fp8(precision))
      return "FP8 only: there is no FP8 descale or P quantisation at " +
             std::string(numerics::name(precision));
  }
  if (m.kind == mut::MutantKind::bwd || id == mut::MutantId::bwd_race) {
    std::string const backward = options_.family + "_bwd";
    if (!find_family(backward))
      return "backward mutant, and " + options_.family + " has no backward on the GPU (no family " +
             backward + " in tuner/families/registry)";
    return "backward mutant: " + backward +
           " is registered, but the GPU mutant runner runs forward families only";
  }
  if (!source_has_switch(source_text_, m.switch_name))
    return std::string(m.switch_name) + " occurs in no #if line of " + source_files_ +
           ": this family does not carry the switch";
  return std::nullopt;
}

int GpuMutantRunner::repeats(mut::MutantId id) const {
  return id == mut::MutantId::bwd_race ? kRaceRepeats : 1;
}

Config GpuMutantRunner::config_for(Problem const& problem) const {
  Config config = family_->default_config(problem);
  if (options_.block_m > 0) config["kBlockM"] = options_.block_m;
  if (options_.block_n > 0) config["kBlockN"] = options_.block_n;
  return config;
}

std::optional<std::string> GpuMutantRunner::config_violation(Problem const& problem) const {
  if (auto why = family_->unsupported(problem)) return why;
  Config const config = config_for(problem);
  if (auto why = family_->violates(config, problem)) return to_string(config) + ": " + *why;
  return std::nullopt;
}

std::string GpuMutantRunner::config_json(std::optional<mut::MutantId>, numerics::AttentionShape const& shape,
                                         Precision precision) const {
  Problem const problem{shape, precision, Direction::forward};
  std::string out = "{\"family\": \"" + options_.family + "\", \"arch\": \"" +
                    std::string(runtime::arch_name(options_.arch)) + "\"";
  for (auto const& [name, value] : config_for(problem)) out += ", \"" + name + "\": " + std::to_string(value);
  return out + "}";
}

runtime::Result<runtime::CompileRequest> GpuMutantRunner::compile_request(std::optional<mut::MutantId> mutant,
                                                                          Problem const& problem) const {
  CompileSpec spec{options_.arch, options_.kernels_dir, {}};
  if (mutant) spec.mutant_switches.emplace_back(mut::info(*mutant).switch_name);
  return make_family_request(*family_, config_for(problem), problem, spec);
}

runtime::Result<runtime::CompiledProgram const*> GpuMutantRunner::program(std::optional<mut::MutantId> mutant,
                                                                          Problem const& problem) {
  std::string problem_class;
  for (auto const& expression : family_->name_expressions(config_for(problem), problem))
    problem_class += expression + ";";
  auto const key = std::make_pair(mutant ? int(*mutant) : -1, problem_class);
  if (auto it = programs_.find(key); it != programs_.end()) return &it->second;
  auto request = compile_request(mutant, problem);
  if (!request) return request.error();
  auto compiled = compiler_.compile(request.value());
  if (!compiled) return compiled.error();
  return &programs_.emplace(key, std::move(compiled->program)).first->second;
}

numerics::AttentionOutputs GpuMutantRunner::run(std::optional<mut::MutantId> mutant,
                                                numerics::AttentionInputs const& inputs,
                                                Precision precision) {
  Problem const problem{inputs.shape, precision, Direction::forward};
  std::string const what = options_.family + " " +
                           (mutant ? std::string(mut::info(*mutant).name) : "correct") + " on " +
                           describe(problem);
  if (auto why = config_violation(problem)) throw std::runtime_error(what + ": " + *why);
  auto compiled = program(mutant, problem);
  if (!compiled)
    throw std::runtime_error(what + ": " + compiled.error().one_line() + "\n" + compiled.error().log);
  auto out = run_once(*family_, config_for(problem), problem, *compiled.value(), to_host_inputs(inputs));
  if (!out) throw std::runtime_error(what + ": " + out.error().one_line());
  return to_attention_outputs(out.value());
}

}  // namespace fl::tuner
