#include "tools/fa_mutate/racecheck_probe.hpp"

#include <iostream>
#include <stdexcept>
#include <variant>

#include "common/exit_codes.hpp"
#include "numerics/input_families.hpp"
#include "tools/fa_mutate/racecheck.hpp"

namespace fl::tools::fa_mutate {

using namespace fl::device;

namespace mut = numerics::mutants;

std::vector<std::string> racecheck_probe_arguments(GpuMutantOptions const& options,
                                                   RacecheckProbe const& probe) {
  std::vector<std::string> args{"--racecheck-probe",
                                std::string(mut::info(probe.mutant).name),
                                "--target",
                                "gpu",
                                "--family",
                                options.family,
                                "--dtype",
                                std::string(common::name(probe.request.precisions.at(0))),
                                "--head-dim",
                                std::to_string(options.head_dim),
                                "--seed",
                                std::to_string(probe.seed),
                                "--kernels-dir",
                                options.kernels_dir.string()};
  if (probe.control) args.emplace_back("--racecheck-control");
  // 0 keeps the family's default tiles; fa-mutate's own options are always given (1..1024).
  if (options.block_m > 0) args.insert(args.end(), {"--block-m", std::to_string(options.block_m)});
  if (options.block_n > 0) args.insert(args.end(), {"--block-n", std::to_string(options.block_n)});
  if (!options.compile_db.empty()) args.insert(args.end(), {"--compile-db", options.compile_db.string()});
  return args;
}

common::AttentionShape racecheck_shape(int head_dim) {
  common::AttentionShape shape;
  shape.batch = kRacecheckBatch;
  shape.heads_q = shape.heads_kv = kRacecheckHeads;
  shape.seqlen_q = shape.seqlen_k = kRacecheckSeqlen;
  shape.head_dim = head_dim;
  return shape;
}

int run_racecheck_probe(RacecheckProbe const& probe) {
  auto opened = open_gpu_mutant_target(probe.request);
  if (auto const* failure = std::get_if<GpuTargetFailure>(&opened)) {
    std::cerr << "fa-mutate --racecheck-probe: " << failure->message << "\n";
    return failure->exit_code;
  }
  auto& target = *std::get<std::unique_ptr<GpuMutantTarget>>(opened);
  GpuFamilyRun& run = target.runs().front();
  common::Precision const precision = run.precisions.front();
  numerics::FamilyRequest request;
  request.shape = racecheck_shape(probe.request.head_dim);
  request.seed = probe.seed;
  request.precision = precision;
  request.with_backward = true;
  numerics::AttentionInputs const inputs =
      numerics::generate_family(numerics::InputFamily::normal, request).inputs;
  Direction const direction =
      GpuMutantRunner::runs_backward(probe.mutant) ? Direction::backward : Direction::forward;
  std::optional<mut::MutantId> const variant =
      probe.control ? std::nullopt : std::optional<mut::MutantId>(probe.mutant);
  try {
    (void)run.runner->run_direction(variant, inputs, precision, direction);
  } catch (std::exception const& e) {
    std::cerr << "fa-mutate --racecheck-probe: " << e.what() << "\n";
    return common::kExitCheckFailed;
  }
  std::cout << kRacecheckProbeRan
            << (probe.control ? "the correct kernel" : std::string(mut::info(probe.mutant).name)) << " of "
            << run.runner->family() << " on " << describe(Problem{request.shape, precision, direction})
            << "\n";
  return common::kExitOk;
}

}  // namespace fl::tools::fa_mutate
