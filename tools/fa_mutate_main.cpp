// fa-mutate: proves the verifier by building known-wrong online-softmax variants (the mutant catalogue),
// running each over the input families and checking that fa-check's rule fails it and its diagnosis names
// it. Exit 0 when every non-equivalent mutant is killed and named correctly and the correct variant passes
// every input; 1 otherwise (or when a target fails); 2 for bad options or an unavailable target; 3 for
// --target gpu without a CUDA driver or device.
#include <boost/program_options.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/exit_codes.hpp"
#include "common/input_limits.hpp"
#include "common/stop_signals.hpp"
#include "common/strict_command_line.hpp"
#include "common/temporary_files.hpp"
#include "db/schema.hpp"
#include "numerics/campaign/campaign_report.hpp"
#include "numerics/campaign/cpu_runner.hpp"
#include "numerics/campaign/failure_dump.hpp"
#include "numerics/campaign/mutation_campaign.hpp"
#include "numerics/campaign/mutation_store.hpp"
#include "numerics/campaign/verifier_judge.hpp"
#include "tools/fa_mutate_options.hpp"
#ifdef FL_FA_MUTATE_WITH_GPU  // fa-mutate links its GPU target, fl_fa_mutate_gpu (tools/CMakeLists.txt)
#include "device/gpu_key.hpp"
#include "tools/fa_mutate/gpu_mutant_target.hpp"
#include "tools/fa_mutate/racecheck.hpp"
#include "tools/fa_mutate/racecheck_probe.hpp"
#endif

namespace po = boost::program_options;
namespace mut = fl::numerics::mutants;
namespace emu = fl::numerics::emulator;
using fl::common::Precision;
using namespace fl::tools::fa_mutate;

int main(int argc, char** argv) {
  po::options_description const opts = fa_mutate_options();
  po::options_description all;
  all.add(opts).add(fa_mutate_hidden_options());
  try {
    fl::common::exit_on_signals();
    po::variables_map const vm = fl::common::parse_strictly(argc, argv, all);
    if (vm.count("help")) {
      std::cout
          << opts
          << "\nExit: 0 all killed and named, 1 a survivor, a wrong name or a false positive, 2 bad input, "
             "3 no CUDA driver or device (--target gpu).\n";
      return 0;
    }
    if (vm.count("list")) {
      list_catalogue();
      return 0;
    }
    std::string const target = vm["target"].as<std::string>();
    if (target != "cpu" && target != "gpu") throw BadInput("--target " + target + ": allowed cpu, gpu");
    // The GPU target's options given to the cpu target were ignored (--compile-db afile/x exited 1 after
    // the campaign, as if the cache had been written): refused, so that what runs is what was asked.
    if (target == "cpu")
      for (char const* option :
           {"compile-db", "kernels-dir", "race-seqlen", "compute-sanitizer", "racecheck-timeout"})
        if (vm.count(option) && !vm[option].defaulted())
          throw BadInput(std::string("--") + option +
                         " is for --target gpu (the cpu target compiles nothing)");
    std::vector<Precision> dtypes = parse_dtypes(
        vm.count("dtype") ? vm["dtype"].as<std::vector<std::string>>()
                          : std::vector<std::string>{target == "gpu" ? "bf16,fp16" : "bf16,fp8_e4m3"});
    namespace limits = fl::common;
    int const block_m = int(limits::count_of(vm, kBlockM));
    int const block_n = int(limits::count_of(vm, kBlockN));
    mut::CampaignOptions options;
    options.precisions = dtypes;
    if (vm.count("mutant")) options.mutants = parse_mutants(vm["mutant"].as<std::vector<std::string>>());
    if (vm.count("inputs")) options.families = parse_inputs(vm["inputs"].as<std::vector<std::string>>());
    options.shape.seqlen_q = options.shape.seqlen_k =
        int(limits::count_of(vm, limits::as_option(limits::kSeqlen, "--seqlen")));
    options.shape.head_dim = int(limits::count_of(vm, limits::as_option(limits::kHeadDim, "--head-dim")));
    options.shape.heads_q = int(limits::count_of(vm, limits::as_option(limits::kHeads, "--heads-q")));
    options.shape.heads_kv = int(limits::count_of(vm, limits::as_option(limits::kHeads, "--heads-kv")));
    auto const seed = fl::common::parse_count(fl::common::kSeed, vm["seed"].as<std::string>());
    if (!seed.ok()) throw BadInput(seed.error);
    options.seed = static_cast<unsigned long long>(seed.value);
    options.race_seqlen = target == "gpu" ? int(limits::count_of(vm, kRaceSeqlen)) : 0;
    if (options.shape.heads_q % options.shape.heads_kv != 0)
      throw BadInput("--heads-q " + std::to_string(options.shape.heads_q) +
                     " is not a multiple of --heads-kv " + std::to_string(options.shape.heads_kv));
#ifdef FL_FA_MUTATE_WITH_GPU
    RacecheckSetup racecheck = discover_racecheck();
    if (vm.count("compute-sanitizer")) {
      std::string const given = vm["compute-sanitizer"].as<std::string>();
      if (given == "none") {
        racecheck.sanitizer.reset();
        racecheck.missing = "--compute-sanitizer none";
      } else if (::access(given.c_str(), X_OK) != 0 || !std::filesystem::is_regular_file(given)) {
        throw BadInput("--compute-sanitizer " + given +
                       ": not an executable file (give compute-sanitizer's path, or none)");
      } else {
        racecheck.sanitizer = std::filesystem::absolute(given);
      }
    }
    std::string const racecheck_text = vm["racecheck-timeout"].as<std::string>();
    auto const racecheck_seconds = limits::parse_count(kRacecheckSeconds, racecheck_text);
    if (!racecheck_seconds.ok())
      throw BadInput("--racecheck-timeout " + racecheck_text + ": allowed " +
                     limits::range_text(kRacecheckSeconds) + " seconds");
    racecheck.limit = std::chrono::seconds(racecheck_seconds.value);
    if (vm.count("racecheck-probe")) {
      if (target != "gpu") throw BadInput("--racecheck-probe needs --target gpu");
      auto const ids = parse_mutants({vm["racecheck-probe"].as<std::string>()});
      std::vector<std::string> const families = vm.count("family")
                                                    ? split_list(vm["family"].as<std::vector<std::string>>())
                                                    : std::vector<std::string>{};
      if (ids.size() != 1 || dtypes.size() != 1 || families.size() != 1)
        throw BadInput("--racecheck-probe runs one mutant of one --family in one --dtype");
      RacecheckProbe probe;
      probe.request.families = families;
      probe.request.precisions = dtypes;
      probe.request.head_dim = options.shape.head_dim;
      probe.request.block_m = block_m;
      probe.request.block_n = block_n;
      if (vm.count("compile-db")) probe.request.compile_db = vm["compile-db"].as<std::string>();
      if (vm.count("kernels-dir")) probe.request.kernels_dir = vm["kernels-dir"].as<std::string>();
      probe.mutant = ids.front();
      probe.control = vm.count("racecheck-control") > 0;
      probe.seed = options.seed;
      return run_racecheck_probe(probe);
    }
#endif
    int const threads = int(limits::count_of(vm, limits::kThreads));
    // Outputs decided before the campaign (minutes on the GPU): an unusable path is refused now.
    if (vm.count("json"))
      if (auto problem = fl::common::output_file_problem(vm["json"].as<std::string>()))
        throw BadInput("--json " + vm["json"].as<std::string>() + ": " + *problem);
    if (vm.count("compile-db"))
      if (auto problem = fl::common::output_file_problem(vm["compile-db"].as<std::string>()))
        throw BadInput("--compile-db " + vm["compile-db"].as<std::string>() + ": " + *problem);
    if (vm.count("dump-dir"))
      if (auto problem = fl::common::output_folder_problem(vm["dump-dir"].as<std::string>()))
        throw BadInput("--dump-dir " + vm["dump-dir"].as<std::string>() + ": " + *problem);
    if (vm.count("db")) {
      try {
        (void)fl::db::open_database(vm["db"].as<std::string>());
      } catch (fl::db::UnusableDatabaseError const& e) {
        throw BadInput(std::string("--db: ") + e.what());
      } catch (fl::db::DatabaseError const& e) {
        throw BadInput(std::string("--db: ") + e.what());
      }
    }
    options.diagnosis.threads = threads;
    auto& candidates = options.diagnosis.block_n_candidates;
    if (std::find(candidates.begin(), candidates.end(), block_n) == candidates.end())
      candidates.push_back(block_n);
    auto& m_candidates = options.diagnosis.block_m_candidates;
    if (std::find(m_candidates.begin(), m_candidates.end(), block_m) == m_candidates.end())
      m_candidates.push_back(block_m);

#ifdef FL_FA_MUTATE_WITH_GPU
    // Holds the device's context: declared before the runners so that it outlives them.
    std::unique_ptr<GpuMutantTarget> gpu;
#endif
    std::vector<std::unique_ptr<mut::MutantRunner>> runners;  // of the chosen target
    std::vector<std::vector<Precision>> runner_precisions;    // per runner (gpu: those its family runs)
    std::string device = "cpu";                               // what ran them, for the JSON report
    std::optional<fl::db::GpuKey> gpu_key;                    // the GPU, recorded with the runs (--db)
    if (target == "gpu") {
#ifdef FL_FA_MUTATE_WITH_GPU
      GpuTargetRequest request;
      if (vm.count("family")) request.families = split_list(vm["family"].as<std::vector<std::string>>());
      request.precisions = dtypes;
      request.head_dim = options.shape.head_dim;
      request.block_m = block_m;
      request.block_n = block_n;
      if (vm.count("compile-db")) request.compile_db = vm["compile-db"].as<std::string>();
      if (vm.count("kernels-dir")) request.kernels_dir = vm["kernels-dir"].as<std::string>();
      request.racecheck = racecheck;
      auto opened = open_gpu_mutant_target(request);
      if (auto const* failure = std::get_if<GpuTargetFailure>(&opened)) {
        std::cerr << "fa-mutate: " << failure->message << "\n";
        return failure->exit_code;
      }
      gpu = std::move(std::get<std::unique_ptr<GpuMutantTarget>>(opened));
      device = gpu->device().name;
      gpu_key = fl::device::gpu_key(gpu->device());
      std::cout << "fa-mutate --target gpu on " << device << "\n";
      for (auto& run : gpu->runs()) {
        for (auto const& line : run.skipped) std::cout << run.runner->family() << ": " << line << "\n";
        runners.push_back(std::move(run.runner));
        runner_precisions.push_back(run.precisions);
      }
#else
      std::cerr << "fa-mutate: --target gpu is not available: this build of fa-mutate is not linked with "
                   "fl_fa_mutate_gpu (the GPU kernel families)\n";
      return fl::common::kExitBadInput;
#endif
    } else {
      for (emu::LoopOrder order :
           parse_cpu_families(vm.count("family") ? vm["family"].as<std::vector<std::string>>()
                                                 : std::vector<std::string>{"fa1,fa2"})) {
        runners.push_back(
            std::make_unique<mut::CpuMutantRunner>(order, emu::TileConfig{block_m, block_n}, threads));
        runner_precisions.push_back(dtypes);
      }
    }

    bool ok = true;
    std::vector<mut::CampaignResult> results;
    std::string command_line;
    for (int a = 0; a < argc; ++a) command_line += (a ? " " : "") + std::string(argv[a]);
    std::string json = "{\"tool\": \"fa-mutate\", \"date\": " + mut::json_string(today()) +
                       ", \"command\": " + mut::json_string(command_line) +
                       ", \"device\": " + mut::json_string(device) +
                       ", \"block_m\": " + std::to_string(block_m) +
                       ", \"block_n\": " + std::to_string(block_n) + ", \"campaigns\": [";
    auto const started = std::chrono::steady_clock::now();
    std::optional<std::filesystem::path> dump_dir;
    if (vm.count("compile-db"))
      if (auto problem = fl::common::output_file_problem(vm["compile-db"].as<std::string>()))
        throw BadInput("--compile-db " + vm["compile-db"].as<std::string>() + ": " + *problem);
    if (vm.count("dump-dir")) {
      dump_dir = vm["dump-dir"].as<std::string>();
      std::error_code error;
      std::filesystem::create_directories(*dump_dir, error);
      if (error || !std::filesystem::is_directory(*dump_dir))
        throw BadInput("--dump-dir " + dump_dir->string() + ": cannot create that folder");
    }
    // From here on SIGINT/SIGTERM ask the campaign to stop after the row in flight (a GPU campaign runs for
    // minutes): the rows finished are printed, written to --json and stored in --db, marked interrupted,
    // and fa-mutate exits 130/143. A second signal of the same kind ends it at once.
    fl::common::StopOnSignals const stop_on_signals;
    options.stop_requested = [] { return fl::common::StopOnSignals::received(); };
    options.on_row = [](mut::MutantOutcome const& row, std::size_t done, std::size_t planned) {
      std::cerr << "fa-mutate: row " << done << "/" << planned << " " << name(row.precision) << " "
                << mut::info(row.id).name << ": " << mut::status_name(row.status) << "\n";
    };
    int stop_signal = 0;
    for (std::size_t i = 0; i < runners.size() && stop_signal == 0; ++i) {
      mut::CampaignOptions runner_options = options;
      runner_options.precisions = runner_precisions[i];
      if (dump_dir) {
        // The diagnosis tried block_n besides fa-check's defaults only when it is not one of them.
        std::vector<int> extra_block_n;
        if (std::find(std::begin(fl::numerics::diagnosis::kDefaultBlockSizes),
                      std::end(fl::numerics::diagnosis::kDefaultBlockSizes),
                      block_n) == std::end(fl::numerics::diagnosis::kDefaultBlockSizes))
          extra_block_n.push_back(block_n);
        runner_options.on_failure = mut::failure_dump_sink(
            *dump_dir, {std::string(runners[i]->target()), runners[i]->family(), extra_block_n});
      }
      mut::CampaignResult const result =
          mut::run_campaign(*runners[i], mut::verifier_judge(threads), runner_options);
      std::cout << mut::campaign_table(result) << "\n";
      ok = ok && result.ok();
      stop_signal = result.stop_signal;
      json += (i ? ",\n" : "\n") + mut::campaign_json(result);
      results.push_back(result);
    }
    double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    // Families not started because of the signal are absent from "campaigns"; "interrupted" says so.
    json +=
        "],\n \"seconds\": " + std::to_string(seconds) + ", \"interrupted\": " +
        (stop_signal ? mut::json_string(fl::common::stop_signal_name(stop_signal)) : std::string("null")) +
        ", \"ok\": " + (ok ? "true" : "false") + "}";
    if (vm.count("json")) fl::common::write_file_atomically(vm["json"].as<std::string>(), json + "\n");
    if (dump_dir)
      std::cout << "failures written under " << dump_dir->string() << " (each with fa-check.sh)\n";
    if (vm.count("db")) {
      auto const ids = mut::store_mutation_runs(vm["db"].as<std::string>(), command_line, results, gpu_key);
      std::cout << "stored " << ids.size() << " mutation run(s) in " << vm["db"].as<std::string>() << "\n";
    }
    if (stop_signal) {
      std::cout << "fa-mutate: INTERRUPTED by " << fl::common::stop_signal_name(stop_signal)
                << ": the rows above are all that ran (the rest of the campaign did not)\n";
      return fl::common::exit_code_after_signal(stop_signal);
    }
    std::cout << (ok ? "every mutant killed and named; no false positive" : "FAILED: see the table above")
              << "\n";
    return ok ? 0 : fl::common::kExitCheckFailed;
  } catch (BadInput const& e) {
    std::cerr << "fa-mutate: " << e.what() << "\n";
    return fl::common::kExitBadInput;
  } catch (po::error const& e) {
    std::cerr << "fa-mutate: " << e.what() << " (fa-mutate --help lists the options)\n";
    return fl::common::kExitBadInput;
  } catch (std::exception const& e) {  // a target that failed (NVRTC, a launch): no verdict to give
    std::cerr << "fa-mutate: " << e.what() << "\n";
    return fl::common::kExitCheckFailed;
  }
}
