// The proof of issue 12, the way SQLite proves itself: a seeded mutation fuzzer over every command. Seed
// .npy files (corpus/, written by make_corpus.py) and seed command lines (corpus/commands.txt) are mutated
// (bytes, header, shape, dtype; tokens deleted, duplicated, replaced by hostile values, hostile options
// inserted) and each outcome must be exit 0, 1 or 2 (3 only for "no GPU"), exit 2 with exactly one line
// on stderr, never a signal (crash), never past the time limit (hang), and no temporary file left behind.
// FA_FUZZ_SECONDS bounds the run (default 30, CI), FA_FUZZ_SEED picks the sequence (default 1).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_process.hpp"
#include "tests/fuzz/mutators.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/tool_process.hpp"

namespace fs = std::filesystem;
using namespace fl::fuzz;

namespace {

constexpr int kDefaultSeconds = 30;
constexpr auto kHangLimit = std::chrono::seconds(60);  // the slowest seed (a cold naive compile) takes ~4 s
char const* const kNpyFiles[] = {"q.npy",  "k.npy",  "v.npy",  "o.npy", "lse.npy",
                                 "do.npy", "dq.npy", "dk.npy", "dv.npy"};
char const* const kOtherFiles[] = {"replay.tsv"};  // fa-tune --replay's recording
// Every command of tools/, each of whose options a seed or hostile_options() must name.
char const* const kCommands[] = {"fa-check", "fa-mutate",  "fa-fp8-report",       "fa-tune",
                                 "fa-bench", "fa-explain", "fa-stability-report", "fa-compile-worker"};

struct Seed {
  std::vector<std::string> tokens;
  std::vector<bool> fixed;
};

std::vector<Seed> read_seeds(fs::path const& scratch) {
  std::vector<Seed> seeds;
  std::ifstream in(fs::path(FA_FUZZ_CORPUS_DIR) / "commands.txt");
  bool const gpu = !fl::test::gpu_unavailable_reason();
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    // With a GPU fa-bench would time the seed for real: only its command line is fuzzed where there is none.
    if (gpu && line.starts_with("fa-bench")) continue;
    Seed seed;
    std::istringstream words(line);
    for (std::string word; words >> word;) {
      bool const fixed = word.starts_with("=");
      if (fixed) word.erase(0, 1);
      for (std::size_t at; (at = word.find("{S}")) != std::string::npos;)
        word.replace(at, 3, scratch.string());
      seed.tokens.push_back(seed.tokens.empty() ? fl::test::sibling_binary(word).string() : word);
      seed.fixed.push_back(fixed);
    }
    seeds.push_back(std::move(seed));
  }
  return seeds;
}

int env_int(char const* name, int fallback) {
  char const* text = std::getenv(name);
  return text ? std::atoi(text) : fallback;
}

int error_lines(fs::path const& err) {
  int lines = 0;
  std::istringstream in(fl::test::read_text(err));
  for (std::string line; std::getline(in, line);) lines += line.empty() ? 0 : 1;
  return lines;
}

bool temporary_left(fs::path const& dir) {
  for (auto const& entry : fs::recursive_directory_iterator(dir))
    if (entry.path().filename().string().find(".tmp") != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("fuzz: every command survives mutated .npy files and command lines", "[fuzz]") {
  fs::path const scratch = fs::temp_directory_path() / ("fl_fuzz_" + std::to_string(::getpid()));
  fs::path const db = scratch.string() + ".db";  // outside scratch: the cache stays warm between runs
  fs::create_directories(scratch);
  auto const seeds = read_seeds(scratch);
  REQUIRE(!seeds.empty());
  Rng rng(std::uint64_t(env_int("FA_FUZZ_SEED", 1)));
  auto const budget = std::chrono::seconds(env_int("FA_FUZZ_SECONDS", kDefaultSeconds));
  auto const started = std::chrono::steady_clock::now();
  std::map<std::string, int> tried, exits;
  std::vector<std::string> failures;
  int runs = 0;
  while (std::chrono::steady_clock::now() - started < budget) {
    // A fresh copy of the corpus each run: a mutation never leaks into the next one.
    fs::remove_all(scratch);
    fs::create_directories(scratch);
    for (char const* name : kNpyFiles) fs::copy_file(fs::path(FA_FUZZ_CORPUS_DIR) / name, scratch / name);
    for (char const* name : kOtherFiles) fs::copy_file(fs::path(FA_FUZZ_CORPUS_DIR) / name, scratch / name);
    Seed const& seed = seeds[pick(rng, seeds.size())];
    std::string const command = fs::path(seed.tokens[0]).filename().string();
    std::string what;
    std::vector<std::string> tokens = seed.tokens;
    std::vector<fs::path> read;  // the .npy files this seed reads (none for fa-check --family)
    for (char const* name : kNpyFiles)
      if (std::find(tokens.begin(), tokens.end(), (scratch / name).string()) != tokens.end())
        read.push_back(scratch / name);
    bool const mutate_file = !read.empty() && pick(rng, 2) == 0;
    if (mutate_file) {  // one of the files this seed reads
      fs::path const target = read[pick(rng, read.size())];
      std::string const bytes = mutate_npy(read_bytes(target), rng, what);
      std::ofstream(target, std::ios::binary | std::ios::trunc) << bytes;
    } else {
      tokens = mutate_tokens(tokens, seed.fixed, rng, what);
    }
    for (auto& token : tokens)  // every database of the run is the shared warm one
      if (token == (scratch / "db.sqlite").string()) token = db.string();
    std::string const category = command + (mutate_file ? " npy" : " cli");
    ++tried[category];
    ++runs;
    Outcome const outcome =
        run_with_limit(tokens, scratch, scratch.string() + ".out", scratch.string() + ".err", kHangLimit);
    std::string line;
    for (auto const& t : tokens) line += (line.empty() ? "" : " ") + ("'" + t + "'");
    std::string const err = fl::test::read_text(scratch.string() + ".err");
    std::string verdict;
    if (outcome.hung) verdict = "hang";
    if (outcome.signal) verdict = "crash (signal " + std::to_string(outcome.signal) + ")";
    if (!outcome.hung && !outcome.signal) {
      ++exits[std::to_string(outcome.exit_code)];
      bool const runs_kernels =
          command == "fa-bench" || command == "fa-tune" ||
          (command == "fa-check" && std::find(tokens.begin(), tokens.end(), "--family") != tokens.end());
      bool const no_gpu = outcome.exit_code == 3 && runs_kernels && err.find("CUDA") != std::string::npos;
      if (outcome.exit_code > 2 && !no_gpu) verdict = "exit " + std::to_string(outcome.exit_code);
      if (outcome.exit_code == 2 && error_lines(scratch.string() + ".err") != 1)
        verdict = "exit 2 with " + std::to_string(error_lines(scratch.string() + ".err")) + " lines";
    }
    if (verdict.empty() && temporary_left(scratch)) verdict = "temporary file left";
    if (!verdict.empty()) failures.push_back(verdict + " [" + category + what + "]: " + line + "\n  " + err);
  }
  double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::ostringstream summary;
  summary << "fuzz: " << runs << " runs in " << seconds << " s (seed " << env_int("FA_FUZZ_SEED", 1) << "):";
  for (auto const& [category, count] : tried) summary << " " << category << " " << count << ";";
  summary << " exit codes:";
  for (auto const& [code, count] : exits) summary << " " << code << "x" << count;
  summary << "; failures " << failures.size() << "\n";
  std::cout << summary.str();
  for (auto const& f : failures) std::cout << "  " << f << "\n";
  fs::remove_all(scratch);
  fs::remove(db);
  for (char const* suffix : {".out", ".err", ".db-wal", ".db-shm"}) fs::remove(scratch.string() + suffix);
  CHECK(failures.empty());
  CHECK(runs > 0);
}

// Item 4 of issue 12's proof: an option no seed names and no mutation inserts is never fuzzed. Every option
// of every command's --help (the hidden ones are written by fa-tune and fa-mutate for their own children)
// must appear in one of that command's seed lines or in hostile_options().
TEST_CASE("fuzz: the seeds and the inserted options name every option of every command", "[fuzz]") {
  std::map<std::string, std::set<std::string>> seeded;
  std::ifstream in(fs::path(FA_FUZZ_CORPUS_DIR) / "commands.txt");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string command;
    words >> command;
    seeded[command];  // a command with a seed but no options (fa-compile-worker) is covered too
    for (std::string word; words >> word;)
      if (word.starts_with("--") || word.starts_with("=--"))
        seeded[command].insert(word.substr(word[0] == '='));
  }
  std::set<std::string> const inserted(hostile_options().begin(), hostile_options().end());
  for (char const* command : kCommands) {
    INFO(command);
    CHECK(seeded.contains(command));
    auto const help = fl::test::run_tool(fl::test::sibling_binary(command).string() + " --help");
    std::istringstream lines(help.out);
    int options = 0;
    // boost's --help: "  --name arg ..." or "  -h [ --help ]" in the option column.
    std::regex const option_column(R"(^  (?:-\w \[ )?(--[a-z0-9-]+))");
    for (std::string line; std::getline(lines, line);) {
      std::smatch match;
      if (!std::regex_search(line, match, option_column) || match[1] == "--help") continue;
      ++options;
      INFO(match[1]);
      CHECK((seeded[command].contains(match[1]) || inserted.contains(match[1])));
    }
    if (std::string(command) != "fa-compile-worker") CHECK(options > 3);
  }
}
