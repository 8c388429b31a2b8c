#include "tuner/cli/tune_options.hpp"

#include <boost/program_options.hpp>

#include <cstdio>
#include <set>
#include <sstream>

#include "common/input_limits.hpp"
#include "common/strict_command_line.hpp"
#include "device/families/registry.hpp"
#include "tuner/cli/fp8_options.hpp"
#include "tuner/cli/option_values.hpp"

namespace po = boost::program_options;

namespace fl::tuner {

namespace {

constexpr char const* kStagesHelp = R"(
What happens to each candidate (config of a family for one problem), in order:
  1. prune:   configs the family's constraints forbid are never proposed (shared memory, divisibility).
  2. compile: NVRTC in worker processes (fa-compile-worker), ahead of the GPU, SQLite compile cache first;
              a compiler crash or a hang past 3 minutes is that config's failure (the signal named),
              stored and never retried for the same source.
  3. prune:   on ptxas' report: spills (not in the family's default, which is always measured), shared
              memory over the limit, zero resident blocks -> 'pruned'.
  4. verify:  run on a small awkward problem (n_q 193, n_k 257) and on sampled rows of the timed problem,
              judged against a float64 reference; a wrong kernel is 'wrong', with why, and never timed.
  5. time:    CUDA events around the launches, warm-up, median of 30 with p20/p80, inputs rotated past L2;
              with --pace fast the verdict of step 4 on the timed problem is computed meanwhile (a wrong
              kernel's timing is dropped), and a candidate clearly slower than the best so far (fastest of
              5 probe runs > 1.25x the best median) is timed by those 5 runs only.
  6. store:   every result is committed to SQLite at once, with how it was timed: kill -9 loses nothing
              finished, and a rerun starts each problem from every measurement stored for it (--budget
              counts them) that was timed as this fa-tune times (one timed otherwise is timed again).
The strategy (exhaustive, random, anneal, bayes) proposes the next candidate from the costs so far. A
sticky CUDA fault stores its candidate as failed and resets the GPU context, and the run goes on; where
the reset does not bring the GPU back (the H200's case), fa-tune starts itself again and resumes after the
culprit (each restart says how many are left; then exit 1, and a rerun resumes); --time-limit covers all.
Progress (stderr) shows problem i of N, candidate j of M, the run's count and an ETA over the whole run.
)";

// More repeats than this say nothing new about noise and cost as much as that many tuning runs.
constexpr int kMaxNoiseRuns = 10;
// Evaluations in all: every family's whole space over every headline shape is a few tens of thousands.
constexpr int kMaxBudget = 1000000;
// Seconds in all: 30 days. The deadline is a steady_clock time point in nanoseconds, which --time-limit
// 1e10 overflowed (a deadline in the past: the run stopped at once).
constexpr double kMaxTimeLimitSeconds = 30.0 * 24 * 3600;

// --gpus and the worker's --gpu-worker/--shard, with what they cannot be combined with.
void parse_gpu_options(TuneOptions& o, std::string const* gpus, int const* worker_gpu,
                       std::string const* shard) {
  if (gpus) {
    if (*gpus == "all") {
      o.all_gpus = true;
    } else {
      o.gpus = parse_int_list(*gpus, "gpus", 0, kMaxGpus - 1);
      std::set<int> seen;
      for (int g : o.gpus)
        if (!seen.insert(g).second)
          throw UsageError("--gpus " + *gpus + " names GPU " + std::to_string(g) + " twice");
    }
    if (o.compile_only)
      throw UsageError("--gpus spreads measurements over GPUs; --compile-only measures nothing");
    if (o.noise_runs > 1) throw UsageError("--gpus with --noise-runs: run a noise series on one GPU");
    if (o.all_gpus && !o.replay_path.empty())
      throw UsageError("--gpus all counts the GPUs present; with --replay name the workers, e.g. --gpus 0,1");
  }
  if (worker_gpu) o.worker_gpu = *worker_gpu;  // in 0..kMaxGpus-1 (parse_whole_number)
  if (shard) {
    int k = 0, n = 0;
    char tail = 0;
    if (std::sscanf(shard->c_str(), "%d/%d%c", &k, &n, &tail) != 2 || n < 1 || n > kMaxGpus || k < 1 || k > n)
      throw UsageError("--shard '" + *shard + "' is not K/N with 1 <= K <= N <= " + std::to_string(kMaxGpus));
    o.shard = std::pair{k, n};
  }
  if ((gpus != nullptr) && (worker_gpu || shard))
    throw UsageError("--gpus starts workers; --gpu-worker and --shard are what it gives each of them");
}

}  // namespace

TuneOptions parse_tune_options(int argc, char const* const argv[]) {
  TuneOptions o;
  std::vector<std::string> families, dtypes;
  std::string head_dims, seqlens, causal = "both", direction = "fwd";
  std::int64_t tokens = 0;
  int batch = 0, heads = 0;
  // Read as text and judged below (or by common::count_value): boost's own int reading said only "the
  // argument ('99999999999') for option '--budget' is invalid", with no range.
  std::string budget, noise_runs = "1", worker_gpu;
  std::string seed = "1";
  double time_limit = 0.0;
  std::string gpus, shard;

  po::options_description desc(
      "fa-tune: JIT-compile attention kernel configs with NVRTC, verify each, time each on the GPU,\n"
      "keep everything in SQLite, and print the best config per problem.\n"
      "Without a GPU it prints the shipped best configs and compile-checks them.\n\nOptions");
  desc.add_options()("help,h", "show this help and exit")(
      "arch", po::value(&o.arch)->default_value("sm90"),
      "target GPU architecture: sm80, sm89 or sm90 (sm90 builds sm_90a code); must match the present GPU "
      "when timing")(
      "compile-only", po::bool_switch(&o.compile_only),
      "compile and prune every config (no GPU needed); print registers, shared memory, spills, compile time")(
      "family", po::value(&families)->composing(),
      "kernel families to tune (repeat or comma-separate); default: every family that can run each problem, "
      "and the best family per problem is named with its margin over the runner-up family")(
      "dtype", po::value(&dtypes)->composing(),
      "fp16, bf16, fp8_e4m3, fp8_e5m2 (comma-separated); default: bf16")(
      "head-dim", po::value(&head_dims), "head dims, e.g. 64,128,256; default: 128")(
      "seqlen", po::value(&seqlens), "sequence lengths n (n_q = n_k), e.g. 512,4096; default: 4096")(
      "batch", common::count_value(common::as_option(common::kBatch, "--batch"), &batch),
      "batch size, 1..65536 (with --heads); default: tokens / n")(
      "heads", common::count_value(common::as_option(common::kHeads, "--heads"), &heads),
      "query heads, 1..65536 (with --batch); default: 2048 / head dim")(
      "tokens", common::count_value(common::kTokens, &tokens),
      "batch = tokens / n (the FlashAttention papers' convention), 1..2^30; default 16384")(
      "causal", po::value(&causal)->default_value("both"), "causal mask: both, yes or no")(
      "direction", po::value(&direction)->default_value("fwd"), "fwd, bwd or both")(
      "strategy", po::value(&o.strategy)->default_value("exhaustive"), "exhaustive, random, anneal or bayes")(
      "budget", po::value(&budget),
      "at most N evaluations in all (1..1000000), split evenly over the problems (family x shape): each "
      "problem's default first, then the searches, in turn, each up to the same total of evaluations "
      "(what a problem's space cannot take passes to the others). A problem starts from every measurement "
      "this database holds for it, and they count, toward the run's budget and the problem's share: a rerun "
      "measures only what its budget leaves, most where the fewest are stored (a resumed problem's "
      "default is measured past it when it was never measured)")(
      "time-limit", common::positive_number_value("--time-limit", &time_limit, kMaxTimeLimitSeconds),
      "at most S seconds in all (up to 30 days), split the same way: defaults first, then each problem's "
      "search gets the time left divided by the problems left (the candidate in flight is finished); time "
      "still left at the end goes back to the problems whose share ran out, in order")(
      "pace", po::value(&o.pace)->default_value("fast"),
      "fast: the timed problem's verdict is computed while the GPU times the candidate (its timing kept only "
      "if it passes), a candidate whose fastest of 5 probe runs is over 1.25x the best median so far stops "
      "there (runs = 5 in the database; it cannot win), inputs are encoded once per problem; baseline: the "
      "2026-11-29 protocol (verify, then time 30 runs, every candidate), to measure both in one run")(
      "replay", po::value(&o.replay_path),
      "answer every candidate from a recorded run (a TSV of --export-measurements) instead of the GPU: plan "
      "a "
      "strategy and budget, draw --report plots, test the command without a GPU")(
      "db", po::value(&o.db_path), "SQLite database (default: $XDG_CACHE_HOME/flashlab/flashlab.sqlite)")(
      "measured-on", po::value(&o.measured_on),
      "without a GPU: answer only from the best configs measured on a GPU whose name contains NAME, in any "
      "case (e.g. H100); default: every GPU of --arch the database knows, a problem tuned on several "
      "answered by the fastest row")(
      "forward-store", po::value(&o.forward_store),
      "keep each backward problem's float64 forward and row statistics in this folder (~75 MiB a headline "
      "shape), so that another run (a restart, the other backward family, a later call) reads them instead "
      "of computing them again; each is checked against the reference on the sampled rows before use")(
      "merge", po::value(&o.merge_path),
      "import every measurement and best config of another fa-tune database (another host's, a copy from a "
      "GPU machine) into --db, then exit: a measurement --db already has is kept, the best config per GPU, "
      "problem and family becomes the faster of the two; one transaction")(
      "json", po::value(&o.json_path), "also write the results as JSON to this path")(
      "report", po::value(&o.report_dir),
      "write report.md with SVG plots (gnuplot) to this folder: TFLOP/s of every timed config (default and "
      "winner marked), a heat map over the two most important tunables, best so far against evaluations per "
      "strategy, time by stage")(
      "export-best", po::value(&o.export_best_path),
      "after tuning, write every best config measured on this GPU as seed TSV (db/seed/best_configs.tsv "
      "format)")("kernels-dir", po::value(&o.kernels_dir),
                 "kernels_src directory (default: found next to the binary)")(
      "export-measurements", po::value(&o.export_measurements_path),
      "after tuning, write every candidate of the (first) run as TSV: family, problem, config, verdict, "
      "median/p20/p80 ms, TFLOP/s, diagnosis (the strategy tests' recorded fixture format)")(
      "noise-runs", po::value(&noise_runs)->default_value("1"),
      "run the same tuning N times (1..10; N >= 2: runs 2..N re-measure every candidate of run 1, those it "
      "answered from the database included) and report per problem whether the winner changed, by how much, "
      "and how many candidates changed rank")(
      "warm-start", po::bool_switch(&o.warm_start),
      "evaluate first the best configs this database holds, or the shipped seeds measured on a GPU of this "
      "name hold where it has none, for the same family and direction at the 4 nearest other shapes, each "
      "a point of this problem's space, spelled as the search spells it (nearness as for a problem not "
      "tuned: head dim, then mask, dtype, n), what a small --budget with bayes or anneal then refines")(
      "jobs,j", common::count_value(common::kJobs, &o.jobs)->default_value("0"),
      "compile workers, compiling ahead while the GPU times (0: one per core; at most 256)")(
      "seed", po::value(&seed)->default_value("1"),
      "seed for the random, anneal and bayes strategies (0..2^63-1)")(
      "gpus", po::value(&gpus),
      "all, or GPU ordinals (PCI bus order) e.g. 0,1: one worker process per GPU, each with its own CUDA "
      "context; the (problem, family) pairs are dealt out to the workers in turn, or, when there are fewer "
      "pairs than GPUs and the strategy is exhaustive or random, each pair's candidates; every result goes "
      "to the one --db (SQLite WAL: a worker killed loses only its candidate in flight, a rerun resumes); "
      "the table is then read from the database. --gpus 0 runs the same way with one worker");
  Fp8Flags fp8_flags;
  add_fp8_options(desc, fp8_flags);
  // Written by the --gpus coordinator on its workers' command lines; not for users, so not in --help.
  po::options_description internal("internal");
  internal.add_options()("gpu-worker", po::value(&worker_gpu))("shard", po::value(&shard));
  po::options_description all_options;
  all_options.add(desc).add(internal);

  po::variables_map vm;
  try {
    vm = common::parse_strictly(argc, argv, all_options);
  } catch (po::error const& e) {
    throw UsageError(e.what());
  }
  if (vm.count("help")) {
    std::ostringstream text;
    text << desc << kStagesHelp
         << "Precision options are claims judged by their own bound, not tunables: every candidate takes the "
            "default's value (fa-bench and fa-check set them with --config): "
         << device::precision_options_text() << ".\n"
         << "\nExit codes: 0 done, 1 a kernel failed verification, 2 bad input, 3 no usable GPU, 130/143 "
            "stopped by Ctrl-C/SIGTERM (the candidate in flight finished and stored, the table so far "
            "printed; "
            "a rerun resumes).\n";
    o.help = true;
    o.help_text = text.str();
    return o;
  }

  require_one_of(o.arch, {"sm80", "sm89", "sm90"}, "arch");
  o.families = split_commas(families);
  refuse_repeats(o.families, "family");
  o.dtypes = split_commas(dtypes);
  if (o.dtypes.empty()) o.dtypes = {"bf16"};
  for (auto const& d : o.dtypes) require_one_of(d, {"fp16", "bf16", "fp8_e4m3", "fp8_e5m2"}, "dtype");
  refuse_repeats(o.dtypes, "dtype");
  o.head_dims = head_dims.empty() ? std::vector<int>{128} : parse_int_list(head_dims, "head-dim", 1, 1 << 30);
  for (int d : o.head_dims)
    if (d != 64 && d != 128 && d != 256)
      throw UsageError("--head-dim " + std::to_string(d) + " is not one of: 64, 128, 256");
  refuse_repeats(o.head_dims, "head-dim");
  o.seqlens = seqlens.empty()
                  ? std::vector<int>{4096}
                  : parse_int_list(seqlens, "seqlen", int(common::kSeqlen.min), int(common::kSeqlen.max));
  refuse_repeats(o.seqlens, "seqlen");
  require_one_of(causal, {"both", "yes", "no"}, "causal");
  o.causal = causal == "yes" ? CausalChoice::yes : causal == "no" ? CausalChoice::no : CausalChoice::both;
  require_one_of(direction, {"fwd", "bwd", "both"}, "direction");
  o.direction = direction == "bwd"    ? DirectionChoice::bwd
                : direction == "both" ? DirectionChoice::both
                                      : DirectionChoice::fwd;
  require_one_of(o.strategy, {"exhaustive", "random", "anneal", "bayes"}, "strategy");
  auto const fp8 = fp8_options_of(fp8_flags);
  if (auto const* why = std::get_if<std::string>(&fp8)) throw UsageError(*why);
  o.fp8 = std::get<device::Fp8Options>(fp8);
  for (auto const& d : o.dtypes)
    if (auto why = fp8_dtype_conflict(o.fp8, *common::parse_precision(d))) throw UsageError(*why);
  require_one_of(o.pace, {"fast", "baseline"}, "pace");

  if (vm.count("batch") != vm.count("heads")) throw UsageError("--batch and --heads go together");
  if (vm.count("batch") && vm.count("tokens"))
    throw UsageError("--tokens cannot be combined with --batch/--heads");
  if (vm.count("batch")) {  // each in range already (common::count_value)
    o.batch = batch;
    o.heads = heads;
  }
  if (vm.count("tokens")) o.tokens = tokens;
  if (vm.count("budget")) {
    if (budget.starts_with('-') || budget == "0")
      throw UsageError("--budget " + budget + " must be positive (1.." + std::to_string(kMaxBudget) + ")");
    o.budget = parse_whole_number(budget, "budget", 1, kMaxBudget);
  }
  if (vm.count("time-limit")) o.time_limit_s = time_limit;
  o.noise_runs = parse_whole_number(noise_runs, "noise-runs", 1, kMaxNoiseRuns);
  auto const parsed_seed = common::parse_count(common::kSeed, seed);
  if (!parsed_seed.ok()) throw UsageError(parsed_seed.error);
  o.seed = std::uint64_t(parsed_seed.value);
  if (!o.merge_path.empty()) {
    if (o.compile_only || !o.replay_path.empty() || vm.count("gpus"))
      throw UsageError(
          "--merge imports into --db and exits; it does not combine with --compile-only, --replay or "
          "--gpus");
    for (auto const* output : {&o.json_path, &o.report_dir, &o.export_best_path, &o.export_measurements_path})
      if (!output->empty())
        throw UsageError(
            "--merge writes only the database; run fa-tune again for --json, --report or an export");
  }
  if (vm.count("measured-on")) {  // not empty: parse_strictly refuses an empty value of any option
    if (o.compile_only || !o.replay_path.empty() || !o.merge_path.empty() || vm.count("gpus"))
      throw UsageError(
          "--measured-on chooses the rows a machine without a GPU answers from; it does not combine with "
          "--compile-only, --replay, --merge or --gpus");
  }
  std::optional<int> const worker =
      vm.count("gpu-worker") ? std::optional(parse_whole_number(worker_gpu, "gpu-worker", 0, kMaxGpus - 1))
                             : std::nullopt;
  parse_gpu_options(o, vm.count("gpus") ? &gpus : nullptr, worker ? &*worker : nullptr,
                    vm.count("shard") ? &shard : nullptr);
  return o;
}

}  // namespace fl::tuner
