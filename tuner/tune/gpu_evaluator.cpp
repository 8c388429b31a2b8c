#include "tuner/tune/gpu_evaluator.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <string_view>

#include "device/gpu_telemetry.hpp"
#include "device/run/run_once.hpp"
#include "tuner/compile/prune.hpp"
#include "tuner/measure/early_stop.hpp"
#include "tuner/run/benchmark.hpp"
#include "tuner/tune/judge_overlap.hpp"

namespace fl::tuner {

namespace {
// 193 and 257: odd lengths that are no multiple of any block size, with n_q != n_k so that the
// bottom-right causal alignment is exercised too.
constexpr int kVerifySeqlenQ = 193;
constexpr int kVerifySeqlenK = 257;
// check_config's defaults for the small problem: numerics' normal input family, seed 1, every row.
constexpr std::uint64_t kSmallProblemSeed = 1;
// Sampled rows of the timed problem (numerics adds every adversarial row): enough to catch a bug in a
// late block, and checked in seconds at n = 16384.
constexpr std::size_t kTimedCheckRows = 256;
constexpr std::uint64_t kInputSeed = 20261129;

// CUDA errors after which the context cannot be used again (CUDA driver API documentation: "the process
// must be terminated and relaunched").
constexpr std::array<std::string_view, 8> kStickyErrors{"CUDA_ERROR_ILLEGAL_ADDRESS",
                                                        "CUDA_ERROR_LAUNCH_FAILED",
                                                        "CUDA_ERROR_MISALIGNED_ADDRESS",
                                                        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
                                                        "CUDA_ERROR_HARDWARE_STACK_ERROR",
                                                        "CUDA_ERROR_INVALID_PC",
                                                        "CUDA_ERROR_ASSERT",
                                                        "CUDA_ERROR_ECC_UNCORRECTABLE"};

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::string pending_key(device::Config const& config, device::Problem const& problem) {
  return device::to_string(config) + "|" + device::describe(problem);
}
// A set's FP8 operands (null for a 16-bit problem): quantised once with the set, or here where the cache
// does not keep them (--pace baseline); a quantisation numerics refused fails with its reason.
runtime::Result<std::shared_ptr<device::Fp8Operands const>> fp8_of(VerificationSet const& set) {
  auto const& problem = set.check.problem();
  if (!common::is_fp8(problem.dtype) || set.fp8) return set.fp8;
  if (!set.fp8_refused.empty()) return runtime::Error{"input", set.fp8_refused, ""};
  auto operands = fp8_operands_of(problem, set.check.inputs());
  if (!operands) return operands.error();
  return std::make_shared<device::Fp8Operands const>(std::move(*operands.value()));
}

}  // namespace

bool is_sticky_cuda_error(std::string const& message) {
  return std::any_of(kStickyErrors.begin(), kStickyErrors.end(),
                     [&](std::string_view name) { return message.find(name) != std::string::npos; });
}

device::Problem verification_problem(device::Problem const& problem) {
  device::Problem small = problem;
  small.shape.batch = 1;
  small.shape.heads_kv = std::min(problem.shape.heads_kv, 2);
  small.shape.heads_q = small.shape.heads_kv * problem.shape.group_size();
  small.shape.seqlen_q = kVerifySeqlenQ;
  small.shape.seqlen_k = kVerifySeqlenK;
  return small;
}

std::optional<EvaluationPace> pace_named(std::string const& name) {
  if (name == "fast") return EvaluationPace{};
  if (name == "baseline")
    return EvaluationPace{
        .judge_while_timing = false, .cut_clearly_slower = false, .encode_inputs_once = false};
  return std::nullopt;
}

GpuEvaluator::GpuEvaluator(device::Family const& family, CompilePool& pool,
                           device::CompileService& invalidator, device::CompileSpec spec,
                           runtime::DeviceInfo device, TimingOptions timing, ReferenceCache& references,
                           EvaluationPace pace)
    : family_(family),
      pool_(pool),
      invalidator_(invalidator),
      spec_(std::move(spec)),
      device_(std::move(device)),
      limits_(device::limits_for(device_)),
      timing_(timing),
      references_(references),
      pace_(pace) {}

GpuEvaluator::PendingCompile& GpuEvaluator::submit(device::Config const& config,
                                                   device::Problem const& problem, bool urgent) {
  auto const key = pending_key(config, problem);
  if (auto it = pending_.find(key); it != pending_.end()) return it->second;
  auto request = device::make_family_request(family_, config, problem, spec_);
  PendingCompile future;
  if (request) {
    future = pool_.submit(std::move(request.value()), urgent);
  } else {
    std::promise<runtime::Result<device::CompileResult>> failed;
    failed.set_value(request.error());
    future = failed.get_future();
  }
  return pending_.emplace(key, std::move(future)).first->second;
}

bool GpuEvaluator::recover() {
  return runtime::reset_primary_context(device_.ordinal).ok();
}

void GpuEvaluator::prefetch(device::Config const& config, device::Problem const& problem) {
  (void)submit(config, problem, false);
}

void GpuEvaluator::prepare(device::Problem const& problem) {
  references_.forward_ahead(problem, kInputSeed);                      // a backward's float64 forward
  references_.normal_set_ahead(problem, kInputSeed, kTimedCheckRows);  // a forward's whole set
}

Evaluation GpuEvaluator::evaluate(device::Config const& config, device::Problem const& problem) {
  Evaluation e;
  auto failed = [&](std::string verdict, runtime::Error const& error) {
    e.verdict = std::move(verdict);
    e.diagnosis = error.one_line();
    e.context_lost = is_sticky_cuda_error(error.one_line());
    return e;
  };
  auto const waited = std::chrono::steady_clock::now();
  auto compiled = [&] {
    auto node = pending_.extract(pending_key(config, problem));
    if (node.empty()) return submit(config, problem, true).get();  // not prefetched: compile it next
    return node.mapped().get();
  }();
  pending_.erase(pending_key(config, problem));
  e.compile_wait_ms = ms_since(waited);
  if (!compiled) return failed("failed", compiled.error());
  e.compile_ms = compiled->from_cache ? 0.0 : compiled->elapsed_ms;
  e.compile_cache_key = compiled->cache_key;
  auto const& program = compiled->program;

  auto const spills = config == family_.default_config(problem) ? SpillRule::allow : SpillRule::prune;
  if (auto why = prune_on_resources(program, family_.launches(config, problem), limits_, spills)) {
    e.verdict = "pruned";
    e.diagnosis = *why;
    return e;
  }

  // The same checks as check_config on the same inputs, with the inputs' reference computed once per run.
  auto const verifying = std::chrono::steady_clock::now();
  // A set is built by the first candidate that asks for it (its inputs, float64 reference and bounds).
  auto const set_of = [&](auto&& lookup) -> VerificationSet const& {
    auto const asked = std::chrono::steady_clock::now();
    auto const& set = lookup();
    e.verify_sets_ms += ms_since(asked);
    return set;
  };
  auto const& small_set = set_of([&]() -> VerificationSet const& {
    return references_.family_set(verification_problem(problem), numerics::InputFamily::normal,
                                  kSmallProblemSeed, 0);
  });
  auto const& small_problem = small_set.check.problem();
  auto const small_fp8 = fp8_of(small_set);
  if (!small_fp8) return failed("failed", small_fp8.error());
  auto small =
      device::run_once(family_, config, small_problem, program, small_set.check.inputs(),
                       small_problem.direction == device::Direction::backward ? &small_set.forward : nullptr,
                       small_fp8->get());
  if (!small) {
    // A cached CUBIN the driver refuses is dropped, so the next run recompiles it.
    if (small.error().stage == "load") invalidator_.invalidate(compiled->cache_key);
    return failed("failed", small.error());
  }
  if (auto const verdict = small_set.check.judge(small.value()); !verdict.pass) {
    e.verdict = "wrong";
    e.diagnosis = "small problem: " + verdict.summary;
    return e;
  }
  e.verify_small_ms = ms_since(verifying) - e.verify_sets_ms;

  auto const& timed_set = set_of([&]() -> VerificationSet const& {
    return references_.normal_set(problem, kInputSeed, kTimedCheckRows);
  });
  auto const big_fp8 = fp8_of(timed_set);
  if (!big_fp8) return failed("failed", big_fp8.error());
  auto big = device::run_once(family_, config, problem, program, timed_set.check.inputs(),
                              problem.direction == device::Direction::backward ? &timed_set.forward : nullptr,
                              big_fp8->get());
  if (!big) return failed("failed", big.error());
  e.verify_ms = ms_since(verifying);
  e.verify_timed_run_ms = e.verify_ms - e.verify_sets_ms - e.verify_small_ms;

  TimingOptions timing_options = timing_;
  if (pace_.cut_clearly_slower) timing_options.cut_above_ms = cut_threshold_ms(best_ms_);
  auto const timing = std::chrono::steady_clock::now();
  auto judged = judge_while_measuring(
      pace_.judge_while_timing, [&] { return timed_set.check.judge(big.value()); },
      [&] {
        // A backward is timed on the reference forward's O and LSE (the same ones its verification used).
        return time_config(
            family_, config, problem, program, device_, timing_options, timed_set.check.inputs(), {},
            problem.direction == device::Direction::backward ? &timed_set.forward : nullptr, big_fp8->get());
      });
  e.verify_ms += judged.judge_wait_ms;
  if (!judged.verdict.pass) {  // its timing, if it ran alongside, is dropped here
    e.verdict = "wrong";
    e.diagnosis = "timed problem: " + judged.verdict.summary;
    e.context_lost =
        judged.measured && !*judged.measured && is_sticky_cuda_error(judged.measured->error().one_line());
    return e;
  }
  auto const& timed = *judged.measured;
  if (!timed) return failed("failed", timed.error());
  e.stats = timed->stats;
  e.protocol = db::TimingProtocol{timing_.warmup, timing_.settle_ms};
  e.tflops = timed->tflops;
  auto const telemetry = device::read_gpu_telemetry(device_.ordinal);
  e.clock_mhz = telemetry.sm_clock_mhz;
  e.temperature_c = telemetry.temperature_c;
  e.timing_ms = ms_since(timing) - judged.judge_wait_ms;
  e.timing_cut = e.stats->runs < timing_.runs;
  return e;
}

}  // namespace fl::tuner
