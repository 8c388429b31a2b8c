// fa-tune as a user runs it: every bad count and every unusable output is one line and exit 2 before any
// work; an output the mode cannot produce is refused instead of silently not written.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/gpu_probe.hpp"
#include "tests/tool_process.hpp"

namespace fs = std::filesystem;

namespace {
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("fl_fa_tune_cli_" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
};
}  // namespace

TEST_CASE("fa-tune refuses hostile counts, stray words and unusable outputs before any work",
          "[tuner][cli]") {
  Scratch scratch;
  std::string const base =
      fl::test::sibling_binary("fa-tune").string() + " --db " + (scratch.dir / "db.sqlite").string() + " ";
  auto refused = [&](std::string const& args, std::string const& named) {
    auto const outcome = fl::test::run_tool(base + args);
    INFO(args << " -> " << outcome.exit_code << ": " << outcome.err);
    CHECK(outcome.exit_code == 2);
    CHECK(outcome.error_lines() == 1);
    CHECK_THAT(outcome.err, Catch::Contains(named));
    CHECK(outcome.out.empty());
  };
  refused("--jobs 99999", "--jobs 99999 is not allowed (0..256");  // aborted: "terminate called ..."
  refused("--seed -1", "--seed -1 is not allowed");                // was seed 2^64 - 1
  refused("stray", "unexpected argument 'stray'");                 // was ignored
  refused("--tokens 99999999999", "--tokens 99999999999 is not allowed");
  refused("--batch 100000 --heads 2", "--batch 100000 is not allowed (1..65536)");
  // Was exit 0 after the work (and a temporary file left beside a folder given as --json).
  refused("--json " + scratch.dir.string(), "is a folder");
  refused("--export-best /nonexistent/best.tsv", "folder /nonexistent does not exist");
  refused("--export-measurements " + scratch.dir.string(), "is a folder");
  // Was exit 0 with nothing written, without a GPU and with one after the whole tuning.
  std::ofstream(scratch.dir / "afile") << "x";
  refused("--report " + (scratch.dir / "afile" / "r").string(),
          "--report " + (scratch.dir / "afile" / "r").string() + ": " + (scratch.dir / "afile").string() +
              " is not a folder");
  refused("--report /proc/flashlab-report", "folder /proc does not take new files");
  // Was exit 0 with no file written.
  refused("--compile-only --family naive --json " + (scratch.dir / "r.json").string(),
          "--json is written from timed results; --compile-only times nothing");
  CHECK(!fs::exists(scratch.dir / "db.sqlite"));  // nothing was started
  for (auto const& entry : fs::directory_iterator(scratch.dir))
    CHECK(entry.path().string().find(".tmp") == std::string::npos);
}

TEST_CASE("fa-tune without a GPU says that --json was not written, exit 3", "[tuner][cli]") {
  if (!fl::test::gpu_unavailable_reason()) return;  // with a GPU this would tune: covered by [gpu] tests
  Scratch scratch;
  auto const outcome = fl::test::run_tool(fl::test::sibling_binary("fa-tune").string() + " --db " +
                                          (scratch.dir / "db.sqlite").string() + " --json " +
                                          (scratch.dir / "r.json").string());
  CHECK(outcome.exit_code == 3);
  CHECK_THAT(outcome.err, Catch::Contains("--json") && Catch::Contains("nothing written"));
  CHECK(!fs::exists(scratch.dir / "r.json"));
  // --report likewise: it plots timed results (it exited 0 and wrote no report).
  auto const report = fl::test::run_tool(fl::test::sibling_binary("fa-tune").string() + " --db " +
                                         (scratch.dir / "db.sqlite").string() + " --report " +
                                         (scratch.dir / "report").string());
  CHECK(report.exit_code == 3);
  CHECK_THAT(report.err, Catch::Contains("--report") && Catch::Contains("nothing written"));
  CHECK(!fs::exists(scratch.dir / "report"));
}

TEST_CASE("fa-tune without a GPU answers a problem nobody tuned with the nearest tuned shape, named",
          "[tuner][cli]") {
  if (!fl::test::gpu_unavailable_reason()) return;  // with a GPU this would tune
  Scratch scratch;
  auto const outcome = fl::test::run_tool(fl::test::sibling_binary("fa-tune").string() + " --db " +
                                          (scratch.dir / "db.sqlite").string() +
                                          " --family fa2_sm80 --head-dim 64 --seqlen 3000 --causal yes");
  INFO(outcome.out << outcome.err);
  CHECK(outcome.exit_code == 0);
  // n3000 is no headline shape: the shipped grid never tunes it, whichever of its shapes it holds.
  CHECK_THAT(outcome.out,
             Catch::Contains("b5 h32/32 n3000x3000 d64 bf16 causal fwd") &&
                 Catch::Contains("not tuned; nearest tuned shape b") &&
                 Catch::Contains("(0 tuned, 1 from the nearest tuned shape, 0 family defaults)"));
}

TEST_CASE("fa-tune without a GPU: --measured-on naming no GPU known is one line, exit 2", "[tuner][cli]") {
  if (!fl::test::gpu_unavailable_reason()) return;  // with a GPU --measured-on is refused: nothing to list
  Scratch scratch;
  auto const outcome =
      fl::test::run_tool(fl::test::sibling_binary("fa-tune").string() + " --db " +
                         (scratch.dir / "db.sqlite").string() + " --family fa2_sm80 --measured-on A100");
  INFO(outcome.out << outcome.err);
  CHECK(outcome.exit_code == 2);
  CHECK(outcome.error_lines() == 1);
  CHECK_THAT(outcome.err, Catch::Contains("--measured-on 'A100' matches none of the GPUs known for sm_90a: "
                                          "NVIDIA H200 ("));
  CHECK(outcome.out.empty());
  auto const h200 = fl::test::run_tool(fl::test::sibling_binary("fa-tune").string() + " --db " +
                                       (scratch.dir / "db.sqlite").string() +
                                       " --family fa2_sm80 --causal no --measured-on h200");
  CHECK(h200.exit_code == 0);
  CHECK_THAT(h200.out, Catch::Contains("(1 tuned, 0 from the nearest tuned shape, 0 family defaults)"));
}

TEST_CASE("fa-tune on an unusable database: exit 2, one line naming it", "[tuner][cli][db]") {
  Scratch scratch;
  fs::create_directories(scratch.dir / "folder.sqlite");
  std::ofstream(scratch.dir / "text.sqlite") << std::string(4096, 'x');
  for (auto const& name : {"folder.sqlite", "text.sqlite"}) {
    auto const outcome =
        fl::test::run_tool(fl::test::sibling_binary("fa-tune").string() +
                           " --compile-only --family naive --db " + (scratch.dir / name).string());
    INFO(name << " -> " << outcome.exit_code << ": " << outcome.err);
    CHECK(outcome.exit_code == 2);  // was 1
    CHECK(outcome.error_lines() == 1);
    CHECK_THAT(outcome.err, Catch::Contains((scratch.dir / name).string()));
  }
}

TEST_CASE(
    "fa-tune --compile-only on a database damaged in its middle: salvaged, every config judged as before",
    "[tuner][cli][db]") {
  Scratch scratch;
  auto const db = scratch.dir / "db.sqlite";
  std::string const command = fl::test::sibling_binary("fa-tune").string() +
                              " --compile-only --family naive --head-dim 64 --causal no --jobs 2 --db " +
                              db.string();
  auto const clean = fl::test::run_tool(command);
  REQUIRE(clean.exit_code == 0);
  auto const summary = [](std::string const& out) { return out.substr(out.find(" configs: ")); };
  {
    std::fstream file(db, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(std::streamoff(fs::file_size(db) / 2));
    file << std::string(4000, '\xde');
  }
  // Was exit 0 with valid configs "rejected: cache: database disk image is malformed".
  auto const damaged = fl::test::run_tool(command);
  CHECK(damaged.exit_code == 0);
  CHECK_THAT(damaged.err, Catch::Contains("was damaged: moved to"));
  CHECK(damaged.out.find("rejected: cache") == std::string::npos);
  std::string const kept_rejected = summary(clean.out).substr(0, summary(clean.out).find(";"));
  CHECK_THAT(damaged.out, Catch::Contains(kept_rejected));  // "N configs: N kept, 0 rejected"
}

TEST_CASE(
    "fa-tune --compile-only stopped by SIGINT / SIGTERM: the finished rows printed, exit 130 / 143, "
    "and the rerun resumes from the cache",
    "[tuner][cli][signals]") {
  for (int signal_number : {SIGINT, SIGTERM}) {
    Scratch scratch;
    std::string const command =
        fl::test::sibling_binary("fa-tune").string() +
        // One head dim: naive's space is 16 configs since its 2026-12-02 rewrite (the rerun compiles what
        // the stopped run did not: at d 64 and 128, 89 s of CI's 2 cores for both signals).
        " --compile-only --family naive --head-dim 64 --causal no --jobs 1 --db " +
        (scratch.dir / "db.sqlite").string();
    auto const out = scratch.dir / "out.txt", err = scratch.dir / "err.txt";
    // The signal goes to the child once its first program is compiled (its progress line says so).
    std::string const script = command + " > " + out.string() + " 2> " + err.string() +
                               " & pid=$!; for i in $(seq 600); do grep -q 'compile 1/' " + err.string() +
                               " && break; sleep 0.05; done; kill -" + std::to_string(signal_number) +
                               " $pid; wait $pid";
    int const code = fl::test::shell_exit_code(script);
    INFO(fl::test::read_text(err));
    CHECK(code == 128 + signal_number);
    std::string const printed = fl::test::read_text(out);
    CHECK_THAT(printed, Catch::Contains("stopped by signal " + std::to_string(signal_number)));
    CHECK_THAT(printed, Catch::Contains("kept"));
    auto const rerun = fl::test::run_tool(command);
    CHECK(rerun.exit_code == 0);
    CHECK(rerun.out.find(", 0 from the cache") == std::string::npos);
  }
}

// Issue 14 item 7 as a user sees it: --help walks through each stage a candidate goes through, and the
// progress line (stderr) names the problem i of N, the candidate j of M, the run's count and an ETA.
TEST_CASE("fa-tune --help documents each stage, and the progress names problem, candidate and ETA",
          "[tuner][cli]") {
  auto const help = fl::test::run_tool(fl::test::sibling_binary("fa-tune").string() + " --help");
  CHECK(help.exit_code == 0);
  for (auto const* stage : {"1. prune:", "2. compile:", "3. prune:", "4. verify:", "5. time:", "6. store:",
                            "problem i of N, candidate j of M"})
    CHECK_THAT(help.out, Catch::Contains(stage));

  auto const fixture = fs::path(FA_SOURCE_DIR) / "tests/tuner/data/fa2_sm80_h200_bf16_d128_n4096_full.tsv";
  REQUIRE(fs::exists(fixture));
  Scratch scratch;
  auto const run =
      fl::test::run_tool(fl::test::sibling_binary("fa-tune").string() + " --replay " + fixture.string() +
                         " --causal no --budget 5 --db " + (scratch.dir / "db.sqlite").string());
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.err,
             Catch::Contains("problem 1/1 fa2_sm80 b4 h16/16 n4096x4096 d128 bf16 full fwd: candidate "
                             "5/168, run 5/5") &&
                 Catch::Contains("ETA"));
}

TEST_CASE("fa-tune --replay reads only a regular file of a recording's size, refusing anything else at once",
          "[tuner][cli]") {
  Scratch scratch;
  // --replay /dev/zero grew one line to 16 GB before it was killed (the limits here end a regression at
  // 2 GB and 30 s instead); a folder was "no header line".
  for (auto const& [path, named] :
       {std::pair{std::string("/dev/zero"), std::string("/dev/zero is not a regular file")},
        {scratch.dir.string(), scratch.dir.string() + " is a folder, not a recording"}}) {
    auto const outcome =
        fl::test::run_tool("ulimit -v 2000000; timeout 30 " + fl::test::sibling_binary("fa-tune").string() +
                           " --db " + (scratch.dir / "db.sqlite").string() +
                           " --family fa2_sm80 --head-dim 128 --seqlen 4096 --causal no "
                           "--replay " +
                           path);
    INFO(path << " -> " << outcome.exit_code << ": " << outcome.err);
    CHECK(outcome.exit_code == 2);
    CHECK(outcome.error_lines() == 1);
    CHECK_THAT(outcome.err, Catch::Contains("fa-tune: --replay: " + named));
  }
}

// The H200's own fault (experiments/tuner/README.md, 2026-12-02): 28 candidates of fa2_sm80's d128 n2048
// space, the 28th an 8-warp 3-stage config whose kernel wrote to address 16 (CUDA_ERROR_ILLEGAL_ADDRESS),
// after which the in-process context reset failed. Replayed, the fault costs its culprit only: fa-tune
// starts itself again, resumes after it and finishes the space.
TEST_CASE("a sticky fault restarts fa-tune once, which resumes after its culprit and finishes",
          "[tuner][cli]") {
  auto const fixture = fs::path(FA_SOURCE_DIR) / "tests/tuner/data/fa2_sm80_h200_fault_demo.tsv";
  REQUIRE(fs::exists(fixture));
  Scratch scratch;
  std::string const args = " --replay " + fixture.string() +
                           " --family fa2_sm80 --dtype bf16 --head-dim 128 --seqlen 2048 --causal no"
                           " --strategy exhaustive --db " +
                           (scratch.dir / "db.sqlite").string() + " --json " +
                           (scratch.dir / "run.json").string();
  auto const run = fl::test::run_tool(fl::test::sibling_binary("fa-tune").string() + args);
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.err, Catch::Contains("the GPU context was lost after kBlockM=64,kBlockN=32,kEpilogueSmem=0,"
                                      "kNWarps=8,kQInRegs=0,kStages=3,kWarpsN=2") &&
                          Catch::Contains("(restart 1 of at most 32)") && !Catch::Contains("restart 2"));
  CHECK_THAT(run.out, Catch::Contains("space done") && !Catch::Contains("context lost") &&
                          Catch::Contains("fa-tune: restarted 1 time after sticky CUDA faults"));
  // One table, one JSON: written by the process that finished, with the culprit stored as failed.
  CHECK_THAT(fl::test::read_text(scratch.dir / "run.json"), Catch::Contains("\"context_lost\": null"));

  // With the restarts spent, the run ends at the fault as before: exit 1, the table says so.
  auto const last = fl::test::run_tool(
      "FA_TUNE_FAULT_RESTARTS=32 " + fl::test::sibling_binary("fa-tune").string() + " --replay " +
      fixture.string() +
      " --family fa2_sm80 --dtype bf16 --head-dim 128 --seqlen 2048 --causal no --strategy exhaustive --db " +
      (scratch.dir / "spent.sqlite").string());
  INFO(last.out << last.err);
  CHECK(last.exit_code == 1);
  CHECK_THAT(last.out + last.err,
             Catch::Contains("could not be restored") && !Catch::Contains("starting fa-tune again"));
}
