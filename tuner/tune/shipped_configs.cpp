#include "tuner/tune/shipped_configs.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "common/precision.hpp"
#include "db/schema.hpp"
#include "db/seed_configs.hpp"
#include "device/compile/compile_config.hpp"
#include "device/compile/compile_service.hpp"
#include "device/families/registry.hpp"
#include "tuner/report/table.hpp"
#include "tuner/tune/db_rows.hpp"
#include "tuner/tune/nearest_tuned.hpp"
#include "tuner/tune/replay_backend.hpp"
#include "tuner/tune/tune_loop.hpp"

namespace fl::tuner {

namespace {

// The seeds were measured for one architecture; only those whose GPU the target can run are listed.
bool runs_on(runtime::TargetArch arch, db::GpuKey const& gpu) {
  auto const best = runtime::arch_for_device(gpu.cc_major, gpu.cc_minor);
  return best && best.value() == arch;
}

// "NVIDIA H200 driver 580.159.04 (CUDA 13000)": the provenance of a seed, as nvidia-smi and the driver API
// named the driver where it was measured.
std::string measured_on(db::GpuKey const& gpu) {
  std::string text = gpu.name + " driver " + gpu.driver_version;
  if (gpu.cuda_driver_api > 0 && gpu.driver_version != std::to_string(gpu.cuda_driver_api))
    text += " (CUDA " + std::to_string(gpu.cuda_driver_api) + ")";
  return text;
}

// --measured-on H100 keeps "NVIDIA H100 80GB HBM3": a part of the name, in any case.
bool name_contains(std::string const& name, std::string const& part) {
  auto const lower = [](unsigned char c) { return char(std::tolower(c)); };
  std::string a(name.size(), ' '), b(part.size(), ' ');
  std::transform(name.begin(), name.end(), a.begin(), lower);
  std::transform(part.begin(), part.end(), b.begin(), lower);
  return a.find(b) != std::string::npos;
}

std::string answer_text(TunedAnswer const& answer) {
  switch (answer.kind) {
    case AnswerKind::tuned:
      return "tuned here: " + format_fixed(answer.from->tflops, 1) + " TFLOP/s on " + answer.from->gpu.name;
    case AnswerKind::nearest:
      return "not tuned; nearest tuned shape " + device::describe(problem_from_key(answer.from->problem)) +
             " (" + format_fixed(answer.from->tflops, 1) + " TFLOP/s there on " + answer.from->gpu.name + ")";
    case AnswerKind::family_default:
      break;
  }
  return answer.considered == 0
             ? "not tuned: the family default (nothing of this family tuned for it)"
             : "not tuned: the family default (no config of this family tuned elsewhere is "
               "valid here)";
}
}  // namespace

ShippedReport report_shipped_configs(runtime::TargetArch arch, std::filesystem::path const& kernels_dir,
                                     std::filesystem::path const& db_path,
                                     std::vector<device::Problem> const& problems,
                                     std::vector<std::string> const& families,
                                     std::string const& gpu_name_part) {
  ShippedReport report;
  auto database = db::open_database(db_path);
  report.seeds_loaded = db::load_seed_configs(database, db::parse_seed_configs(db::shipped_seed_configs()));
  std::vector<db::BestConfig> known;
  std::map<std::string, int> per_gpu;
  for (auto const& best : db::best_configs(database)) {
    if (!runs_on(arch, best.gpu) || best.gpu.name.starts_with(kReplayGpuPrefix)) continue;
    ++per_gpu[best.gpu.name];
    if (name_contains(best.gpu.name, gpu_name_part)) known.push_back(best);
  }
  report.gpus.assign(per_gpu.begin(), per_gpu.end());
  report.measured_on_matched = gpu_name_part.empty() || !known.empty();
  if (!report.measured_on_matched) return report;
  report.configs = int(known.size());

  // The answers first: the rows they use are the ones listed and compile-checked. Checking every known row
  // would compile the whole shipped grid (hundreds of programs, ~1.5 s each on 2 cores) for one question.
  TextTable answers({"problem", "family", "config", "answer"});
  std::vector<db::BestConfig> used;
  for (auto const& problem : problems)
    for (auto const& name : families) {
      auto family = device::find_family(name);
      if (!family || family->unsupported(problem)) continue;
      auto const answer = nearest_tuned(*family, problem, known);
      ++(answer.kind == AnswerKind::tuned     ? report.tuned
         : answer.kind == AnswerKind::nearest ? report.nearest
                                              : report.defaults);
      answers.add_row({device::describe(problem), name, answer.config, answer_text(answer)});
      if (answer.from && std::none_of(used.begin(), used.end(), [&](db::BestConfig const& u) {
            return u.gpu.name == answer.from->gpu.name && u.family == answer.from->family &&
                   u.config == answer.from->config &&
                   device::describe(problem_from_key(u.problem)) ==
                       device::describe(problem_from_key(answer.from->problem));
          }))
        used.push_back(*answer.from);
    }
  report.answers = answers.render();

  device::CompileService compiler(db_path);
  device::CompileSpec const spec{.arch = arch, .kernels_dir = kernels_dir, .mutant_switches = {}};
  TextTable table(
      {"family", "problem", "config", "TFLOP/s", "ms", "measured on", "date", "source", "compiles here"});
  for (auto const& best : used) {
    ++report.listed;
    std::string compiles = "unknown family";
    auto family = device::find_family(best.family);
    auto config = device::parse_config(best.config);
    auto const problem = problem_from_key(best.problem);
    if (family && config) {
      auto request = device::make_family_request(*family, *config, problem, spec);
      auto compiled = request ? compiler.compile(request.value())
                              : runtime::Result<device::CompileResult>(request.error());
      compiles = compiled ? "yes" : "no: " + compiled.error().one_line();
    }
    if (compiles != "yes") ++report.compile_failures;
    table.add_row({best.family, device::describe(problem), best.config, format_fixed(best.tflops, 1),
                   format_fixed(best.median_ms, 3), measured_on(best.gpu), best.recorded_at.substr(0, 10),
                   best.source, compiles});
  }
  report.table = table.render();
  return report;
}

std::string describe_gpus(ShippedReport const& report) {
  std::string text;
  for (auto const& [name, rows] : report.gpus)
    text += (text.empty() ? "" : ", ") + name + " (" + std::to_string(rows) + ")";
  return text.empty() ? "none" : text;
}

}  // namespace fl::tuner
