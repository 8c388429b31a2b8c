// fa-mutate as CI runs it: the whole catalogue on the CPU target, both loop orders, bf16 and e4m3, at a
// small shape; exit 0 and "ok": true in the JSON. Bad options exit 2 with one line.
#include <catch2/catch.hpp>

#include "tests/tool_process.hpp"

#include <signal.h>

#include "db/schema.hpp"
#include "numerics/mutants/catalogue.hpp"

#include <sys/wait.h>
#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

fs::path fa_mutate() {
  return fl::test::sibling_binary("fa-mutate");
}

int exit_code(std::string const& args, fs::path const& output) {
  return fl::test::shell_exit_code(fa_mutate().string() + " " + args + " > " + output.string() + " 2>&1");
}

std::string slurp(fs::path const& p) {
  return fl::test::read_text(p);
}

std::string first_diagnosis(std::string const& json) {
  return fl::test::first_diagnosis_id(json);
}

}  // namespace

TEST_CASE("fa-mutate --target cpu kills and names every mutant with no false positive", "[mutants][cli]") {
  REQUIRE(fs::exists(fa_mutate()));
  fs::path const dir = fs::temp_directory_path() / ("fl_fa_mutate_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  int const rc =
      exit_code("--target cpu --seqlen 48 --head-dim 16 --threads 1 --json " + (dir / "r.json").string(),
                dir / "out.txt");
  INFO(slurp(dir / "out.txt"));
  CHECK(rc == 0);
  std::string const json = slurp(dir / "r.json");
  CHECK(json.find("\"ok\": true") != std::string::npos);
  CHECK(json.find("\"score\": 100") != std::string::npos);
  CHECK(slurp(dir / "out.txt").find("bwd-race") != std::string::npos);  // listed, never dropped
  fs::remove_all(dir);
}

TEST_CASE("fa-mutate refuses bad options with exit code 2", "[mutants][cli]") {
  REQUIRE(fs::exists(fa_mutate()));
  fs::path const out =
      fs::temp_directory_path() / ("fl_fa_mutate_bad_" + std::to_string(::getpid()) + ".txt");
  CHECK(exit_code("--dtype fp9", out) == 2);
  CHECK(slurp(out).find("fp9") != std::string::npos);
  CHECK(exit_code("--family fa3", out) == 2);
  CHECK(exit_code("--mutant no-such-bug", out) == 2);
  CHECK(exit_code("--target tpu", out) == 2);
  CHECK(slurp(out).find("--target tpu: allowed cpu, gpu") != std::string::npos);
  // --target gpu itself is tested with the GPU target, in tests/tools/fa_mutate/fa_mutate_gpu_cli_test.cpp.
  fs::remove(out);
}

TEST_CASE("fa-mutate --dump-dir writes each killing input so that fa-check names the mutant from the files",
          "[mutants][cli]") {
  REQUIRE(fs::exists(fa_mutate()));
  fs::path const dir = fs::temp_directory_path() / ("fl_fa_mutate_dump_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  int const rc = exit_code(
      "--target cpu --family fa2 --dtype bf16 --mutant unrescaled-o,bwd-missing-delta "
      "--seqlen 48 --head-dim 16 --threads 1 --dump-dir " +
          (dir / "dump").string(),
      dir / "out.txt");
  INFO(slurp(dir / "out.txt"));
  REQUIRE(rc == 0);
  fs::path const fa_check = fa_mutate().parent_path() / "fa-check";
  for (std::string const id : {"unrescaled-o", "bwd-missing-delta"}) {
    fs::path const folder = dir / "dump" / "cpu-fa2" / "bf16" / id;
    for (char const* file : {"q.npy", "k.npy", "v.npy", "o.npy", "lse.npy", "do.npy", "dq.npy", "dk.npy",
                             "dv.npy", "case.json", "fa-check.sh"})
      CHECK(fs::exists(folder / file));
    std::string const case_json = slurp(folder / "case.json");
    CHECK(case_json.find("\"mutant\": \"" + id + "\"") != std::string::npos);
    CHECK(case_json.find("\"kBlockN\": 32") != std::string::npos);
    // The replay: the check fails (exit 1) and the diagnosis names the mutant first.
    std::string const replay = "FA_CHECK=" + fa_check.string() + " sh " + (folder / "fa-check.sh").string() +
                               " > " + (dir / "replay.txt").string() + " 2>&1";
    int const replay_code = fl::test::shell_exit_code(replay);
    INFO(slurp(dir / "replay.txt"));
    CHECK(replay_code == 1);
    CHECK(first_diagnosis(slurp(folder / "check.json")) == id);
  }
  fs::remove_all(dir);
}

TEST_CASE(
    "fa-mutate refuses hostile counts, stray words and unusable outputs before its campaign, in one line",
    "[mutants][cli]") {
  REQUIRE(fs::exists(fa_mutate()));
  fs::path const dir = fs::temp_directory_path() / ("fl_fa_mutate_hostile_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "not.sqlite") << "this is not a database\n";
  auto refused = [&](std::string const& args, std::string const& named) {
    auto const outcome = fl::test::run_tool(fa_mutate().string() + " --seqlen 48 " + args);
    INFO(args << " -> " << outcome.exit_code << ": " << outcome.err);
    CHECK(outcome.exit_code == 2);
    CHECK(outcome.error_lines() == 1);
    CHECK_THAT(outcome.err, Catch::Contains(named));
    CHECK(outcome.out.empty());  // refused before any campaign printed a table
  };
  refused("--threads 99999", "--threads 99999 is not allowed (0..1024");  // aborted: thread creation failed
  refused("--threads -1", "--threads -1 is not allowed");                 // was run with -1 threads
  refused("--seed -1", "--seed -1 is not allowed");                       // was seed 2^64 - 1
  refused("--target cpu stray", "unexpected argument 'stray'");
  refused("--head-dim 5000", "--head-dim 5000 is not allowed (1..1024)");
  refused("--json " + dir.string(), "is a folder");
  refused("--db " + (dir / "not.sqlite").string(),
          (dir / "not.sqlite").string() + " is not a SQLite");  // was after
  fs::remove_all(dir);
}

TEST_CASE(
    "fa-mutate stopped by SIGINT / SIGTERM finishes the row in flight, writes and stores the rows run, "
    "marked interrupted, and exits 130 / 143",
    "[mutants][cli][signals]") {
  REQUIRE(fs::exists(fa_mutate()));
  for (int signal_number : {SIGINT, SIGTERM}) {
    fs::path const dir = fs::temp_directory_path() / ("fl_fa_mutate_signal_" + std::to_string(::getpid()) +
                                                      "_" + std::to_string(signal_number));
    fs::create_directories(dir);
    auto const out = dir / "out.txt", err = dir / "err.txt", json = dir / "r.json", db = dir / "runs.sqlite";
    // The signal goes once the second row's progress line is on stderr: the campaign is then in its third
    // row, which must still finish.
    std::string const script = fa_mutate().string() +
                               " --target cpu --family fa2 --dtype bf16 --threads 1 --json " + json.string() +
                               " --db " + db.string() + " > " + out.string() + " 2> " + err.string() +
                               " & pid=$!; for i in $(seq 1200); do grep -q 'row 2/' " + err.string() +
                               " 2>/dev/null && break; sleep 0.05; done; kill -" +
                               std::to_string(signal_number) + " $pid; wait $pid";
    int const code = fl::test::shell_exit_code(script);
    std::string const printed = slurp(out);
    INFO(printed << slurp(err));
    CHECK(code == 128 + signal_number);
    std::string const name = signal_number == SIGINT ? "SIGINT" : "SIGTERM";
    CHECK_THAT(printed, Catch::Contains("INTERRUPTED by " + name));
    std::string const report = slurp(json);
    CHECK_THAT(report, Catch::Contains("\"interrupted\": \"" + name + "\""));
    CHECK_THAT(report, Catch::Contains("\"ok\": false"));
    int const planned = int(fl::numerics::mutants::kMutantCount);  // one precision, one family
    CHECK_THAT(report, Catch::Contains("\"rows_planned\": " + std::to_string(planned)));
    // Whole rows only: at least the two announced and the one in flight, fewer than the whole campaign.
    auto const rows_at = report.find("\"rows_run\": ");
    REQUIRE(rows_at != std::string::npos);
    int const rows_run = std::stoi(report.substr(rows_at + 12));
    CHECK(rows_run >= 3);
    CHECK(rows_run < planned);
    int statuses = 0;  // each row run is whole: it has its status
    for (auto at = report.find("\"status\": \""); at != std::string::npos;
         at = report.find("\"status\": \"", at + 1))
      ++statuses;
    CHECK(statuses == rows_run);
    CHECK_FALSE(fs::exists(json.string() + ".tmp"));
    // The database holds those rows, the run marked unfinished (passed NULL).
    fl::db::Database store = fl::db::open_database(db);
    auto run =
        store.prepare("SELECT passed IS NULL, (SELECT count(*) FROM mutation_results) FROM mutation_runs");
    REQUIRE(run.step());
    CHECK(run.column_int64(0) == 1);
    CHECK(run.column_int64(1) == rows_run);
    fs::remove_all(dir);
  }
}

TEST_CASE(
    "fa-mutate: the GPU target's options are refused for --target cpu, and --compile-db is checked first",
    "[mutants][cli]") {
  fs::path const dir = fs::temp_directory_path() / ("fl_fa_mutate_gpu_only_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "afile") << "x";
  std::string const small = " --mutant unrescaled-o --inputs normal --seqlen 16 --head-dim 8 --threads 1 ";
  // --compile-db under a regular file ran the whole cpu campaign (exit 1 on its survivors), never saying
  // that nothing was, or could be, cached.
  for (std::string const& args : std::vector<std::string>{
           "--compile-db " + (dir / "afile" / "c.sqlite").string(), "--kernels-dir " + dir.string(),
           "--race-seqlen 64", "--racecheck-timeout 10", "--compute-sanitizer none"}) {
    auto const r = fl::test::run_tool(fa_mutate().string() + small + args);
    INFO(args << " -> " << r.exit_code << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.error_lines() == 1);
    CHECK_THAT(r.err, Catch::Contains("is for --target gpu"));
    CHECK(r.out.empty());
  }
  // With the GPU target an unusable cache path is refused before the device is asked (exit 3 here).
  auto const r = fl::test::run_tool(fa_mutate().string() + " --target gpu --compile-db " +
                                    (dir / "afile" / "c.sqlite").string());
  CHECK(r.exit_code == 2);
  CHECK(r.error_lines() == 1);
  CHECK_THAT(r.err, Catch::Contains("--compile-db") && Catch::Contains("is not a folder"));
  fs::remove_all(dir);
}

TEST_CASE(
    "fa-mutate: counts beyond int name their range, a list item named twice and an empty value are "
    "refused",
    "[mutants][cli]") {
  // Each was "the argument ('99999999999') for option '--block-m' is invalid" (no range), ran its rows
  // twice (bf16,bf16), or stored nothing (--db '' opened an unnamed temporary database).
  for (auto const& [args, named] : std::vector<std::pair<std::string, std::string>>{
           {"--block-m 99999999999", "--block-m 99999999999 is not allowed (1..1024)"},
           {"--block-n 0", "--block-n 0 is not allowed (1..1024)"},
           {"--seqlen 99999999999", "--seqlen 99999999999 is not allowed (1..16777216)"},
           {"--heads-q 2x", "--heads-q '2x' is not allowed (a whole number, 1..65536)"},
           {"--threads 99999999999", "--threads 99999999999 is not allowed (0..1024"},
           {"--dtype bf16,bf16", "--dtype bf16 is named twice"},
           {"--mutant unrescaled-o,unrescaled-o", "--mutant unrescaled-o is named twice"},
           {"--inputs normal,normal", "--inputs normal is named twice"},
           {"--db ''", "--db '' is empty"}}) {
    auto const r = fl::test::run_tool(fa_mutate().string() + " " + args);
    INFO(args << " -> " << r.exit_code << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.error_lines() == 1);
    CHECK_THAT(r.err, Catch::StartsWith("fa-mutate: ") && Catch::Contains(named));
    CHECK(r.out.empty());
  }
}
