#include "tools/fa_check/fa_check_family.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <variant>
#include <vector>

#include "common/exit_codes.hpp"
#include "common/input_limits.hpp"
#include "common/strict_command_line.hpp"
#include "device/compile/compile_config.hpp"
#include "device/families/registry.hpp"
#include "device/run/run_once.hpp"
#include "numerics/gpu/kernel_check.hpp"
#include "numerics/gpu/kernel_fp8_operands.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "numerics/gpu/kernel_tensors.hpp"
#include "numerics/input_families.hpp"
#include "numerics/mutants/catalogue.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_source.hpp"
#include "runtime/target_arch.hpp"

namespace fl::tools::fa_check {

namespace po = boost::program_options;
using common::as_option;

namespace {

constexpr common::CountRange kBatchOption = as_option(common::kBatch, "--batch");
constexpr common::CountRange kHeadsOption = as_option(common::kHeads, "--heads");
constexpr common::CountRange kHeadsKvOption = as_option(common::kHeads, "--heads-kv");
constexpr common::CountRange kSeqlenOption = as_option(common::kSeqlen, "--seqlen");
constexpr common::CountRange kSeqlenKOption = as_option(common::kSeqlen, "--seqlen-k");
constexpr common::CountRange kHeadDimOption = as_option(common::kHeadDim, "--head-dim");

// Everything the user chose, judged: the family, its problem (direction from the family) and config.
struct FamilyPlan {
  std::unique_ptr<device::Family> family;
  device::Problem problem;
  device::Config config;
  numerics::InputFamily inputs = numerics::InputFamily::normal;
  std::uint64_t seed = 1;
  std::vector<std::string> mutant_switches;
  std::filesystem::path kernels_dir;
};

FamilyOutcome failure(int exit_code, std::string message) {
  FamilyOutcome out;
  out.exit_code = exit_code;
  out.message = std::move(message);
  return out;
}

std::string mutant_names() {
  std::string names;
  for (auto const& m : numerics::mutants::kCatalogue)
    names += (names.empty() ? "" : ", ") + std::string(m.name);
  return names;
}

std::string input_family_names() {
  std::string names;
  for (auto f : numerics::all_input_families()) names += (names.empty() ? "" : ", ") + std::string(name(f));
  return names;
}

// The plan, or the one line that refuses it (po::error from a count out of its range escapes to the caller).
std::variant<FamilyPlan, std::string> plan_of(po::variables_map const& vm, common::Precision dtype,
                                              double softmax_scale) {
  FamilyPlan plan;
  std::string const family_name = vm["family"].as<std::string>();
  plan.family = device::find_family(family_name);
  if (!plan.family) return "--family " + family_name + " is not allowed (" + device::family_names() + ")";
  if (vm["causal-align"].as<std::string>() != "bottom-right")
    return "--causal-align " + vm["causal-align"].as<std::string>() +
           ": our kernels align the causal mask bottom-right only";

  common::AttentionShape& s = plan.problem.shape;
  s.batch = int(common::count_of(vm, kBatchOption));
  s.heads_q = int(common::count_of(vm, kHeadsOption));
  s.heads_kv = vm.count("heads-kv") ? int(common::count_of(vm, kHeadsKvOption)) : s.heads_q;
  s.seqlen_q = int(common::count_of(vm, kSeqlenOption));
  s.seqlen_k = vm.count("seqlen-k") ? int(common::count_of(vm, kSeqlenKOption)) : s.seqlen_q;
  s.head_dim = int(common::count_of(vm, kHeadDimOption));
  s.causal = vm["causal"].as<bool>();
  s.softmax_scale = softmax_scale;
  if (s.heads_q % s.heads_kv != 0)
    return "--heads " + std::to_string(s.heads_q) + " is not a multiple of --heads-kv " +
           std::to_string(s.heads_kv);
  plan.problem.dtype = dtype;

  // The direction follows the family: one that refuses the forward but runs the backward is a backward.
  auto why = plan.family->unsupported(plan.problem);
  if (why) {
    device::Problem backward = plan.problem;
    backward.direction = device::Direction::backward;
    if (plan.family->unsupported(backward)) return "--family " + family_name + ": " + *why;
    plan.problem = backward;
  }
  plan.config = plan.family->default_config(plan.problem);
  if (vm.count("config")) {
    auto const config = device::parse_config(vm["config"].as<std::string>());
    if (!config)
      return "--config " + vm["config"].as<std::string>() + " is not a config (kBlockM=128,kBlockN=64,...)";
    if (auto unknown = device::unknown_config_key(*plan.family, *config)) return "--config " + *unknown;
    plan.config = *config;
  }
  if (auto broken = plan.family->violates(plan.config, plan.problem))
    return "--config " + device::to_string(plan.config) + " breaks a rule of " + family_name + ": " + *broken;

  auto const inputs_text = vm["inputs"].as<std::string>();
  auto const inputs = numerics::parse_input_family(inputs_text);
  if (!inputs) return "--inputs " + inputs_text + " is not allowed (" + input_family_names() + ")";
  if (!numerics::gpu::family_applies(*inputs, s.causal)) return "--inputs " + inputs_text + " needs --causal";
  plan.inputs = *inputs;
  plan.seed = std::uint64_t(common::count_of(vm, common::kSeed));
  if (vm.count("mutant")) {
    auto const id = numerics::mutants::find_mutant(vm["mutant"].as<std::string>());
    if (!id) return "--mutant " + vm["mutant"].as<std::string>() + " is not allowed (" + mutant_names() + ")";
    plan.mutant_switches.emplace_back(numerics::mutants::info(*id).switch_name);
  }
  std::optional<std::filesystem::path> dir;
  if (vm.count("kernels-dir")) dir = vm["kernels-dir"].as<std::string>();
  auto kernels_dir = runtime::resolve_kernels_dir(dir);
  if (!kernels_dir) return kernels_dir.error().one_line();
  plan.kernels_dir = kernels_dir.value();
  return plan;
}

}  // namespace

void add_family_options(po::options_description& options) {
  std::string const config_help =
      "with --family: its config (default: the family's default); precision options too (" +
      device::precision_options_text() + ")";
  options.add_options()  //
      ("family", po::value<std::string>(),
       ("instead of --q --k --v --o: run our kernel family on the GPU and judge it (" +
        device::family_names() + ")")
           .c_str())                                                                                      //
      ("config", po::value<std::string>(), config_help.c_str())                                           //
      ("batch", po::value<std::string>()->default_value("1"), "with --family: B")                         //
      ("heads", po::value<std::string>()->default_value("2"), "with --family: H_q")                       //
      ("heads-kv", po::value<std::string>(), "with --family: H_kv (default H_q)")                         //
      ("seqlen", po::value<std::string>()->default_value("256"), "with --family: N_q")                    //
      ("seqlen-k", po::value<std::string>(), "with --family: N_k (default N_q)")                          //
      ("head-dim", po::value<std::string>()->default_value("64"), "with --family: D")                     //
      ("inputs", po::value<std::string>()->default_value("normal"), "with --family: the input family")    //
      ("seed", po::value<std::string>()->default_value("1"), "with --family: the inputs' seed")           //
      ("mutant", po::value<std::string>(), "with --family: compile the kernel with this catalogued bug")  //
      ("kernels-dir", po::value<std::string>(),
       "with --family: kernels_src (default: found as fa-tune does)");
}

bool family_mode(po::variables_map const& vm) {
  return vm.count("family") > 0;
}

FamilyOutcome run_family(po::variables_map const& vm, common::Precision claimed, double softmax_scale,
                         std::size_t sample_rows) {
  std::variant<FamilyPlan, std::string> planned;
  try {
    planned = plan_of(vm, claimed, softmax_scale);
  } catch (po::error const& e) {
    return failure(common::kExitBadInput, e.what());
  }
  if (auto const* refused = std::get_if<std::string>(&planned))
    return failure(common::kExitBadInput, *refused);
  FamilyPlan& plan = std::get<FamilyPlan>(planned);

  auto context = runtime::PrimaryContext::retain(0);
  if (!context) {  // "no CUDA driver: ..." / "no CUDA device: ...": its first line only
    std::string const& message = context.error().message;
    return failure(common::kExitNoGpu, message.substr(0, message.find('\n')));
  }
  auto const& gpu = context->info();
  auto const arch = runtime::arch_for_device(gpu.cc_major, gpu.cc_minor);
  if (!arch) return failure(common::kExitNoGpu, gpu.name + ": " + arch.error().message);

  device::CompileSpec const spec{arch.value(), plan.kernels_dir, plan.mutant_switches};
  auto program = device::compile_family_config(*plan.family, plan.config, plan.problem, spec);
  if (!program)
    return failure(common::kExitCheckFailed, program.error().one_line() + "\n" + program.error().log);
  device::HostInputs const inputs = numerics::gpu::family_inputs(plan.problem, plan.inputs, plan.seed);
  bool const backward = plan.problem.direction == device::Direction::backward;
  device::HostOutputs const forward =
      backward ? numerics::gpu::reference_forward(plan.problem, inputs) : device::HostOutputs{};
  std::optional<device::Fp8Operands> fp8;
  try {
    fp8 = numerics::gpu::fp8_operands_for(plan.problem, inputs);
  } catch (std::invalid_argument const& e) {
    return failure(common::kExitCheckFailed, std::string("input: ") + e.what());
  }
  auto out = device::run_once(*plan.family, plan.config, plan.problem, program.value(), inputs,
                              backward ? &forward : nullptr, fp8 ? &*fp8 : nullptr);
  if (!out) return failure(common::kExitCheckFailed, out.error().one_line());

  FamilyOutcome outcome;
  outcome.problem.inputs = numerics::gpu::to_attention_inputs(plan.problem, inputs);
  outcome.problem.observed = numerics::gpu::to_attention_outputs(out.value());
  outcome.problem.input_dtype = std::string(common::name(plan.problem.dtype)) + " (our kernel)";
  outcome.options = numerics::gpu::check_options(
      numerics::gpu::recipe_of(*plan.family, plan.config, plan.problem), plan.problem, sample_rows, 1);
  outcome.description = std::string(plan.family->name()) + " " + device::to_string(plan.config) +
                        (plan.mutant_switches.empty() ? "" : " -D" + plan.mutant_switches.front()) + " on " +
                        device::describe(plan.problem) + " (" + gpu.name + "), inputs " +
                        std::string(name(plan.inputs));
  return outcome;
}

}  // namespace fl::tools::fa_check
