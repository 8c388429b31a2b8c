// The .npy reader fuzzed in process (issue 12, item 6): the corpus files mutated by mutate_npy
// (mutators.hpp), each read by common::read_npy, thousands per second, so that a run under
// AddressSanitizer/UBSan (FA_SANITIZE=ON) sees every out-of-bounds read or overflow the reader could make.
// Every outcome must be an array whose values match its shape and dtype, or an NpyError naming the file in
// one line; any other exception, a signal or a sanitizer report fails the test.
// FA_FUZZ_NPY_SECONDS bounds it (default 5), FA_FUZZ_SEED picks the sequence (default 1).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <typeinfo>
#include <vector>

#include "common/npy.hpp"
#include "tests/fuzz/mutators.hpp"

namespace fs = std::filesystem;
using namespace fl::fuzz;

namespace {

constexpr int kDefaultSeconds = 5;

int env_int(char const* name, int fallback) {
  char const* text = std::getenv(name);
  return text ? std::atoi(text) : fallback;
}

// What a successful read must satisfy: one value per element of the shape, a dtype the reader knows.
std::string inconsistency(fl::common::NpyArray const& a) {
  std::size_t count = 1;
  for (std::size_t s : a.shape) count *= s;
  if (count != a.values.size())
    return "shape holds " + std::to_string(count) + " elements, read " + std::to_string(a.values.size());
  if (a.dtype != "float16" && a.dtype != "float32" && a.dtype != "float64") return "dtype " + a.dtype;
  return {};
}

}  // namespace

TEST_CASE("fuzz: the .npy reader answers every mutated file with an array or one NpyError line", "[fuzz]") {
  fs::path const file = fs::temp_directory_path() / ("fl_fuzz_npy_" + std::to_string(::getpid()) + ".npy");
  std::vector<std::string> seeds;
  for (char const* name : {"q.npy", "k.npy", "v.npy", "o.npy", "lse.npy"})
    seeds.push_back(read_bytes(fs::path(FA_FUZZ_CORPUS_DIR) / name));
  Rng rng(std::uint64_t(env_int("FA_FUZZ_SEED", 1)));
  auto const budget = std::chrono::seconds(env_int("FA_FUZZ_NPY_SECONDS", kDefaultSeconds));
  auto const started = std::chrono::steady_clock::now();
  std::size_t runs = 0, arrays = 0, refused = 0;
  std::vector<std::string> failures;
  while (std::chrono::steady_clock::now() - started < budget) {
    std::string what;
    std::string const bytes = mutate_npy(seeds[pick(rng, seeds.size())], rng, what);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    ++runs;
    try {
      fl::common::NpyArray const a = fl::common::read_npy(file);
      ++arrays;
      if (std::string const bad = inconsistency(a); !bad.empty()) failures.push_back(what + ": " + bad);
    } catch (fl::common::NpyError const& e) {
      ++refused;
      std::string const line = e.what();
      if (line.empty() || line.find('\n') != std::string::npos ||
          line.find(file.string()) == std::string::npos)
        failures.push_back(what + ": not one line naming the file: " + line);
    } catch (std::exception const& e) {
      failures.push_back(what + ": " + typeid(e).name() + ": " + e.what());
    }
  }
  fs::remove(file);
  double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "fuzz npy: " << runs << " files in " << seconds << " s (seed " << env_int("FA_FUZZ_SEED", 1)
            << "): " << arrays << " read, " << refused << " refused; failures " << failures.size() << "\n";
  for (std::size_t i = 0; i < failures.size() && i < 20; ++i) std::cout << "  " << failures[i] << "\n";
  CHECK(failures.empty());
  CHECK(runs > 0);
}
