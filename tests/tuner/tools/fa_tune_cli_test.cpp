// fa-tune as a user runs it: every bad count and every unusable output is one line and exit 2 before any
// work; an output the mode cannot produce is refused instead of silently not written.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
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
}
