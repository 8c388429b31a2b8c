// fa-bench: compile one family config (or the family default), check it on small awkward problems and
// on the timed shape itself (sampled rows), then time it over the headline shapes (b = 16384 / n,
// h = 2048 / d) by the project protocol, and print / write a table. Exit 0 all checks pass, 1 a check
// failed, 2 bad command line, 3 no GPU.
#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/cli_lists.hpp"
#include "common/exit_codes.hpp"
#include "common/precision.hpp"
#include "common/sha256.hpp"
#include "common/temporary_files.hpp"
#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
#include "device/families/registry.hpp"
#include "device/family_runner.hpp"
#include "device/run/device_problem.hpp"
#include "device/run/run_once.hpp"
#include "numerics/gpu/kernel_check.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_source.hpp"
#include "runtime/target_arch.hpp"
#include "tools/fa_bench_check_log.hpp"
#include "tools/fa_bench_modes.hpp"
#include "tuner/bench_table.hpp"
#include "tuner/cli/bench_options.hpp"
#include "tuner/run/benchmark.hpp"

namespace po = boost::program_options;
using namespace fl;
using namespace fl::device;
using namespace fl::tuner;

namespace {

using tools::fa_bench::today;
using tools::fa_bench::write_or_false;

constexpr std::size_t kCheckRows = 256;  // sampled query rows on the timed shape (plus numerics' own)
constexpr std::uint64_t kCheckSeed = 7;
// numerics' sampled backward reference needs every LSE and D of the sampled heads (two dot products per
// score): checked on the timed shape up to this n; larger n are timed after the edge-problem checks only.
constexpr int kMaxCheckedBackwardSeqlen = 2048;
constexpr std::uint64_t kTimedInputSeed = 99;

// Small problems that exercise every edge: tails in both sequences, n_q != n_k both ways (causal rows
// fully masked when n_q > n_k), GQA, a single partial block.
std::vector<Problem> edge_problems(Problem const& base) {
  std::vector<Problem> out;
  auto add = [&](int b, int hq, int hkv, int nq, int nk) {
    Problem p = base;
    p.shape.batch = b;
    p.shape.heads_q = hq;
    p.shape.heads_kv = hkv;
    p.shape.seqlen_q = nq;
    p.shape.seqlen_k = nk;
    out.push_back(p);
  };
  add(2, 4, 2, 1000, 1000);
  add(1, 6, 2, 257, 513);
  add(1, 2, 1, 513, 130);
  add(1, 2, 2, 77, 77);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  common::exit_on_signals();
  BenchOptions const opt = parse_bench_options(argc, argv);
  auto const family = find_family(opt.family);
  validate_bench_plan(opt, *family);  // before the device: bad input is exit 2 with or without a GPU
  std::optional<tools::fa_bench::CheckLog> check_log;
  try {
    check_log = tools::fa_bench::CheckLog::from_environment();
  } catch (std::runtime_error const& e) {
    bench_bad_input(e.what());
  }
  if (opt.compile_space) return tools::fa_bench::compile_space_main(opt, *family);
  auto const kernels_dir = runtime::resolve_kernels_dir(opt.kernels_dir);
  if (!kernels_dir) bench_bad_input(kernels_dir.error().one_line());
  auto context = runtime::PrimaryContext::retain(0);
  if (!context) runtime::exit_no_gpu(context.error());
  auto const& device = context->info();
  if (opt.error_study.empty() && opt.stability_study.empty())
    if (auto too_big = device_fit_problem(opt, *family, device.memory_bytes)) bench_bad_input(*too_big);
  runtime::TargetArch arch = runtime::TargetArch::sm_90a;
  if (opt.arch) {
    arch = *opt.arch;
  } else {
    auto const a = runtime::arch_for_device(device.cc_major, device.cc_minor);
    if (!a) runtime::exit_no_gpu(a.error());
    arch = a.value();
  }
  device::CompileSpec const spec{arch, kernels_dir.value(), opt.mutants};
  std::printf("device %s, sm %d, driver %d, arch %s, %s\n", device.name.c_str(), device.sm_count,
              device.driver_version, std::string(runtime::arch_name(arch)).c_str(), today().c_str());
  if (!opt.error_study.empty()) return tools::fa_bench::error_study_main(opt, *family, spec, device, arch);
  if (!opt.stability_study.empty())
    return tools::fa_bench::stability_study_main(opt, *family, spec, device, arch);

  std::vector<BenchRow> rows;
  bool all_pass = true;
  std::string const exe_sha = check_log ? tools::fa_bench::executable_sha256() : "";
  for (auto const dtype : opt.dtypes)
    for (int const d : opt.head_dims)
      for (bool const causal : opt.causal) {
        Problem const base = timed_problem(opt, opt.seqlens.front(), d, causal, dtype);
        if (auto why = family->unsupported(base)) bench_bad_input(*why);
        Config const config = bench_config(opt, *family, base);
        auto program = device::compile_family_config(*family, config, base, spec);
        if (!program) {
          std::fprintf(stderr, "%s\n%s\n", program.error().one_line().c_str(), program.error().log.c_str());
          return common::kExitCheckFailed;
        }
        // The heaviest kernel of the launch sequence (a backward's first launch is its small preprocess).
        int regs = 0;
        std::size_t spills = 0;
        for (auto const& name : family->name_expressions(config, base)) {
          auto const* res = program->resources_of(name);
          if (!res) continue;
          regs = std::max(regs, res->registers);
          spills += res->spill_store_bytes + res->spill_load_bytes;
        }
        std::printf("%s %s d%d %s: %s  regs %d spills %zu  compile %.0f ms\n", opt.family.c_str(),
                    std::string(common::name(dtype)).c_str(), d, causal ? "causal" : "full",
                    to_string(config).c_str(), regs, spills, program->compile_ms);
        // check_config, unless FA_BENCH_CHECK_LOG holds this check's pass: then its recorded summary, marked.
        std::string const cubin_sha =
            check_log ? common::sha256_hex({program->cubin.data(), program->cubin.size()}) : "";
        auto const check_once = [&](Problem const& p, CheckOptions const& o,
                                    std::function<device::HostInputs const*()> const& given)
            -> runtime::Result<numerics::gpu::Verdict> {
          std::string key;
          if (check_log) {
            key = tools::fa_bench::check_key(
                exe_sha, cubin_sha, device.identity(),
                opt.family + " " + to_string(config) + " " + describe(p) + " rows " +
                    std::to_string(o.sample_rows) + " seed " + std::to_string(o.seed) + " inputs " +
                    std::string(given ? "normal " + std::to_string(kTimedInputSeed)
                                      : std::string(numerics::name(o.input_family))));
            if (auto earlier = check_log->passed(key))
              return numerics::gpu::Verdict{
                  true, "checked earlier (" + check_log->path().filename().string() + "): " + *earlier};
          }
          auto check = check_config(*family, config, p, program.value(), o, given ? given() : nullptr);
          if (check_log && check && check->pass) check_log->record(key, check->summary);
          return check;
        };
        // One table row of problem p (timing filled in later), its check's text and verdict given.
        auto const row_for = [&](Problem const& p, std::string check_text, bool passed) {
          BenchRow row;
          row.family = opt.family;
          row.config = to_string(config);
          row.dtype = std::string(common::name(dtype));
          row.mask = causal ? "causal" : "full";
          row.direction = direction_name(opt.direction);
          row.batch = p.shape.batch;
          row.heads = p.shape.heads_q;
          row.seqlen = p.shape.seqlen_q;
          row.heads_kv = p.shape.heads_kv;
          row.seqlen_k = p.shape.seqlen_k;
          row.head_dim = d;
          row.check = std::move(check_text);
          row.passed = passed;
          row.registers = regs;
          row.spill_bytes = spills;
          row.device_bytes = device::DeviceProblem::bytes_needed(p, family->scratch(config, p));
          return row;
        };
        // The forward that fills O and LSE before a backward is timed.
        Fa2Sm80Family const forward_family;
        std::optional<runtime::Result<runtime::CompiledProgram>> forward_program;
        if (opt.direction == Direction::backward) {
          Problem fwd = base;
          fwd.direction = Direction::forward;
          forward_program =
              device::compile_family_config(forward_family, forward_family.default_config(fwd), fwd, spec);
          if (!*forward_program) {
            std::fprintf(stderr, "%s\n", (*forward_program).error().one_line().c_str());
            return common::kExitCheckFailed;
          }
        }
        if (opt.launch_once) {
          for (int const n : opt.seqlens) {
            Problem const p = timed_problem(opt, n, d, causal, dtype);
            auto const inputs = numerics::gpu::make_normal_inputs(p, kTimedInputSeed);
            auto const fp8 = tuner::fp8_operands_of(p, inputs);
            auto const ran = fp8 ? device::run_once(*family, config, p, program.value(), inputs, nullptr,
                                                    fp8->has_value() ? &**fp8 : nullptr)
                                 : runtime::Result<device::HostOutputs>(fp8.error());
            BenchRow const row =
                row_for(p, ran ? "launched once, not checked" : ran.error().one_line(), ran.ok());
            std::printf("  %-40s launched once  %8.1f MiB  %s\n", describe(p).c_str(),
                        double(row.device_bytes) / (1024.0 * 1024.0), row.check.c_str());
            rows.push_back(row);
            all_pass = all_pass && ran.ok();
          }
          continue;
        }
        for (auto const& edge : edge_problems(base)) {
          if (auto why = family->unsupported(edge)) {  // flash_decode: its edges are decode shapes
            std::printf("  check %-36s skipped: %s\n", describe(edge).c_str(), why->c_str());
            continue;
          }
          auto check = check_once(edge, {}, {});
          std::string const text = check ? check->summary : check.error().one_line();
          bool const pass = check && check->pass;
          all_pass = all_pass && pass;
          std::printf("  check %-36s %s\n", describe(edge).c_str(), text.c_str());
        }
        for (int const n : opt.seqlens) {
          Problem const p = timed_problem(opt, n, d, causal, dtype);
          // Made when the check or the timing needs them (a check taken from the log and --check-only do
          // not).
          std::optional<device::HostInputs> inputs;
          auto const timed_inputs = [&]() -> device::HostInputs const* {
            if (!inputs) inputs = numerics::gpu::make_normal_inputs(p, kTimedInputSeed);
            return &*inputs;
          };
          bool const backward = opt.direction == Direction::backward;
          runtime::Result<numerics::gpu::Verdict> check =
              numerics::gpu::Verdict{true, "not checked at this n (edge problems checked)"};
          if (!backward || n <= kMaxCheckedBackwardSeqlen)
            check = check_once(p, {kCheckRows, kCheckSeed}, timed_inputs);
          bool const pass = check && check->pass;
          all_pass = all_pass && pass;
          BenchRow row = row_for(p, check ? check->summary : check.error().one_line(), pass);
          if (!opt.check_only) {
            // A backward reads O and LSE: written on each input set by fa2_sm80's forward, as in training.
            std::function<runtime::Status(device::DeviceProblem&)> prepare;
            if (backward) {
              prepare = [&](device::DeviceProblem& dp) -> runtime::Status {
                Problem fwd = p;
                fwd.direction = Direction::forward;
                auto runner = FamilyRunner::load(forward_family, forward_family.default_config(fwd), fwd,
                                                 forward_program->value());
                if (!runner) return runner.error();
                return runner->run(dp.params);
              };
            }
            auto timed =
                time_config(*family, config, p, program.value(), device,
                            {opt.warmup, opt.runs, std::nullopt, opt.settle_ms}, *timed_inputs(), prepare);
            if (!timed) {
              row.check += "; timing: " + timed.error().one_line();
            } else {
              row.stats = timed->stats;
              row.tflops = timed->tflops;
              row.samples = std::move(timed->samples);
              row.input_sets = timed->input_sets;
            }
          }
          constexpr double kMiB = 1024.0 * 1024.0;
          std::printf("  %-40s %9.3f ms  p20 %.3f p80 %.3f  %6.1f TFLOP/s  %8.1f MiB  %s\n",
                      describe(p).c_str(), row.stats.median_ms, row.stats.p20_ms, row.stats.p80_ms,
                      row.tflops, double(row.device_bytes) / kMiB, row.check.c_str());
          std::fflush(stdout);
          rows.push_back(row);
        }
      }
  std::string const device_text = device.identity() + " " + std::string(runtime::arch_name(arch));
  if (!opt.csv.empty() && !write_or_false(opt.csv, to_csv(rows)))
    bench_bad_input("cannot write --csv " + opt.csv);
  if (!opt.json.empty() && !write_or_false(opt.json, to_json(rows, device_text, today())))
    bench_bad_input("cannot write --json " + opt.json);
  if (!opt.samples.empty() && !write_or_false(opt.samples, to_samples_csv(rows)))
    bench_bad_input("cannot write --samples " + opt.samples);
  std::printf("%s\n", all_pass ? "all checks passed" : "SOME CHECKS FAILED");
  return all_pass ? common::kExitOk : common::kExitCheckFailed;
}
