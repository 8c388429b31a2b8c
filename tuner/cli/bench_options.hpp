#pragma once
// fa-bench's command line: every option parsed and validated here, each bad value one line on stderr and
// exit code 2 (the same rule as fa-tune's tune_options), so that fa_bench_main only sees valid options.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/precision.hpp"
#include "device/config.hpp"
#include "device/family.hpp"
#include "device/problem.hpp"
#include "runtime/target_arch.hpp"

namespace fl::tuner {

struct BenchOptions {
  std::string family = "fa2_sm80";
  std::optional<device::Config> config;
  std::vector<common::Precision> dtypes;
  std::vector<int> head_dims, seqlens;
  std::vector<bool> causal;
  std::optional<runtime::TargetArch> arch;
  std::optional<std::filesystem::path> kernels_dir;
  std::vector<std::string> mutants;
  int runs = 30, warmup = 5;
  int settle_ms = 0;         // --settle-ms: untimed launches after the warm-up (tuner/run/timing.hpp)
  int batch = 0, heads = 0;  // 0: the headline shape's b = 16384/n, h = 2048/d
  int seqlen_q = 0;          // 0: n_q = n_k = --seqlen; else n_q, with --seqlen giving n_k (decode)
  int heads_kv = 0;          // 0: h_kv = h_q; else key/value heads (GQA: a divisor of h_q)
  std::string csv, json;
  std::string samples;  // --samples: every timed run as CSV (tuner/bench_table.hpp)
  bool check_only = false;
  bool launch_once = false;
  bool compile_space = false;
  device::Direction direction = device::Direction::forward;
  device::Fp8Options fp8;
  std::string error_study;      // --error-study: CSV path
  std::string stability_study;  // --stability-study: CSV path
};

// "fa-bench: <line>" on stderr, exit code 2.
[[noreturn]] void bench_bad_input(std::string const& line);

// Parses and validates; --help prints and exits 0; a bad value exits 2 through bench_bad_input.
BenchOptions parse_bench_options(int argc, char** argv);

// Everything about the options that needs no GPU, decided before the device is asked (a bad value was
// answered "no GPU", exit 3, on a machine without one): each dtype/head dim/mask supported by the family,
// --config's names known to it and its values allowed, --mutant switches in the catalogue, the outputs
// writable, and options the mode would ignore refused. Exits 2 through bench_bad_input.
void validate_bench_plan(BenchOptions const& opt, device::Family const& family);

// The family config fa-bench runs on `base`: the default with --config's values over it.
device::Config bench_config(BenchOptions const& opt, device::Family const& family,
                            device::Problem const& base);

// The first timed problem that cannot fit in `device_bytes` of GPU memory, as one line with the bytes it
// needs and the bytes the GPU has; nullopt when all fit. Asked before any allocation: a naive problem
// whose S alone needs 4.4 TB was left to allocate (and hang) instead.
std::optional<std::string> device_fit_problem(BenchOptions const& opt, device::Family const& family,
                                              std::size_t device_bytes);

// The headline shape for n and d, or the --batch/--heads/--heads-kv/--seqlen-q override (and the FP8
// options): n is n_k, and n_q too unless --seqlen-q gives it.
device::Problem timed_problem(BenchOptions const& opt, int n, int d, bool causal, common::Precision dtype);

}  // namespace fl::tuner
