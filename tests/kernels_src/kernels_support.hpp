#pragma once
// Shared by the kernels_src tests: where the kernels live and the problems every family must handle.
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "device/problem.hpp"

namespace fl::test {

// The problem a compile test builds a config for: only its head dim, mask and dtype reach the template
// arguments, so one headline shape (n 1024) serves every compile test.
inline device::Problem compile_problem(int head_dim, bool causal, common::Precision dtype) {
  return device::headline_problem(1024, head_dim, causal, dtype, device::Direction::forward);
}

// FA_KERNELS_DIR when set (the GPU machine runs a carried copy, not this source tree), else the source tree.
inline std::filesystem::path kernels_dir() {
  char const* env = std::getenv("FA_KERNELS_DIR");
  return env && *env ? std::filesystem::path(env) : std::filesystem::path(FA_KERNELS_SRC_DIR);
}

// The text of one kernels_src file.
inline std::string kernel_file_text(std::string const& name) {
  std::ifstream f(kernels_dir() / name);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// How many preprocessor lines of `text` test the mutant switch FA_MUTANT_<id>.
inline long mutant_switch_lines(std::string const& text, std::string const& id) {
  std::regex const use("#\\s*if(n?def)?\\s+FA_MUTANT_" + id + "\\b");
  return std::distance(std::sregex_iterator(text.begin(), text.end(), use), std::sregex_iterator());
}

// Small problems with every edge: odd n, tails in both sequences, n_q != n_k both ways (fully masked
// causal rows when n_q > n_k), GQA.
inline std::vector<device::Problem> edge_problems(int head_dim, bool causal, common::Precision dtype) {
  std::vector<device::Problem> out;
  for (auto [b, hq, hkv, nq, nk] : std::vector<std::array<int, 5>>{
           {2, 4, 2, 333, 333}, {1, 6, 2, 257, 513}, {1, 2, 1, 200, 70}, {1, 2, 2, 17, 17}}) {
    device::Problem p;
    p.shape = {b, hq, hkv, nq, nk, head_dim, causal, 0.0};
    p.dtype = dtype;
    out.push_back(p);
  }
  return out;
}

// Every catalogued forward mutant switch with the mask it needs to act (the causal-only bugs need Is_causal):
// what each forward family's [gpu] test proves is caught.
struct ForwardMutantCase {
  std::string switch_name;
  bool causal;
};
inline std::vector<ForwardMutantCase> forward_mutant_cases() {
  return {{"FA_MUTANT_UNRESCALED_O", false},      {"FA_MUTANT_UNRESCALED_L", false},
          {"FA_MUTANT_M_INIT_ZERO", false},       {"FA_MUTANT_NORMALIZE_IN_LOOP", false},
          {"FA_MUTANT_STALE_MAX", false},         {"FA_MUTANT_MISSING_SCALE", false},
          {"FA_MUTANT_EXP_BASE_MISMATCH", false}, {"FA_MUTANT_CAUSAL_DIAGONAL", true},
          {"FA_MUTANT_MASKED_ROW_NAN", true},     {"FA_MUTANT_TAIL_UNMASKED", false},
          {"FA_MUTANT_LSE_WITHOUT_MAX", false}};
}

}  // namespace fl::test
