// What fa-tune's run tunes (tune_command.hpp): the selected problems, the families, their (problem, family)
// pairs in table order, and whether --arch fits the present GPU.
#include "device/families/registry.hpp"
#include "tuner/tune/compile_only.hpp"
#include "tuner/tune/tune_command.hpp"

namespace fl::tuner {

std::vector<device::Problem> selected_problems(TuneOptions const& options) {
  std::vector<device::Problem> problems;
  for (auto const& kind : selected_problem_classes(options))
    for (int n : options.seqlens) {
      device::Problem p = kind;
      auto& s = p.shape;
      s.seqlen_q = s.seqlen_k = n;
      if (options.batch) {
        s.batch = *options.batch;
        s.heads_q = s.heads_kv = *options.heads;
      } else {
        s.batch = device::headline_batch(n, options.tokens.value_or(device::kHeadlineTokens));
        s.heads_q = s.heads_kv = device::headline_heads(s.head_dim);
      }
      problems.push_back(p);
    }
  return problems;
}

std::vector<std::string> default_tuning_families(TuneOptions const& options) {
  if (!options.families.empty()) return options.families;
  std::vector<std::string> names;
  // fa3_sm90 needs Hopper's wgmma and TMA (sm_90a code): in the default set only for --arch sm90.
  for (auto const& f : device::all_families())
    if (!f->name().starts_with("fa3") || options.arch == "sm90") names.emplace_back(f->name());
  return names;
}

std::optional<std::string> arch_mismatch(runtime::TargetArch arch, runtime::DeviceInfo const& device) {
  auto const best = runtime::arch_for_device(device.cc_major, device.cc_minor);
  if (best && (best.value() == arch || (arch == runtime::TargetArch::sm_80 && device.cc_major == 8)))
    return std::nullopt;
  return "--arch " + std::string(runtime::arch_name(arch)) + " does not match the present GPU " +
         device.name + " (compute capability " + std::to_string(device.cc_major) + "." +
         std::to_string(device.cc_minor) + ")";
}

std::vector<RunPair> run_pairs(
    TuneOptions const& options,
    std::function<bool(device::Family const&, device::Problem const&)> const& can_measure) {
  std::vector<RunPair> pairs;
  auto const problems = selected_problems(options);
  for (std::size_t p = 0; p < problems.size(); ++p)
    for (auto const& name : default_tuning_families(options)) {
      auto family = device::find_family(name);
      if (!family || family->unsupported(problems[p]) || !can_measure(*family, problems[p]))
        continue;  // names validated by the caller
      pairs.push_back({problems[p], p, std::move(family)});
    }
  return pairs;
}

}  // namespace fl::tuner
