// The template-argument order of every sm80-era kernel is declared once (kernels_src/fa_kernel_signatures.h)
// and the host builds its name expressions from it: these tests fail when a kernel's own template head and
// its declaration disagree (a parameter renamed, retyped, added, dropped or moved), and pin the expression
// the host builds.
#include <catch2/catch.hpp>

#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels_src/fa_kernel_signatures.h"
#include "tests/kernels_src/kernels_support.hpp"

using fa::signature::Kind;

namespace {

struct HeadParam {
  std::string name;
  Kind kind;
};

// The template head of `__global__ ... name(` in `text`: the parameters a name expression must give, in
// order, or nothing when the text declares no such kernel (or one whose head this reader does not
// understand). Trailing parameters with a default (fa_backward.cuh's DqLayout, which only fa3_sm90_bwd sets)
// are the kernel's own: the declarations list what the sm80 host passes.
std::optional<std::vector<HeadParam>> template_head(std::string const& text, std::string const& name) {
  std::smatch m;
  // template <...> __global__ void [__launch_bounds__(...)] name(   (one level of parentheses inside)
  std::regex const kernel(
      "template\\s*<([^>]*)>\\s*__global__\\s+void\\s+(?:__launch_bounds__\\((?:[^()]|\\([^()]*\\))*\\)\\s*)"
      "?" +
      name + "\\s*\\(");
  if (!std::regex_search(text, m, kernel)) return std::nullopt;
  std::vector<HeadParam> out;
  std::string const list = m[1];
  std::regex const param("\\s*(typename|class|int|bool)\\s+(\\w+)\\s*(=\\s*[\\w:]+\\s*)?(,|$)");
  std::size_t consumed = 0;
  bool defaults_began = false;
  for (auto it = std::sregex_iterator(list.begin(), list.end(), param); it != std::sregex_iterator(); ++it) {
    if (static_cast<std::size_t>(it->position()) != consumed) return std::nullopt;  // something unread
    consumed += it->length();
    bool const has_default = (*it)[3].matched;
    if (defaults_began && !has_default) return std::nullopt;  // not C++ either
    defaults_began = defaults_began || has_default;
    if (has_default) continue;
    auto const word = (*it)[1].str();
    out.push_back({(*it)[2], word == "int" ? Kind::integer : word == "bool" ? Kind::boolean : Kind::type});
  }
  if (consumed != list.size()) return std::nullopt;
  return out;
}

std::string describe(HeadParam const& p) {
  return std::string(p.kind == Kind::type      ? "typename "
                     : p.kind == Kind::integer ? "int "
                                               : "bool ") +
         p.name;
}

// Empty when the head matches the declaration, else the first difference.
std::string mismatch(fa::signature::Kernel const& k, std::vector<HeadParam> const& head) {
  if (static_cast<int>(head.size()) != k.count)
    return std::to_string(head.size()) + " parameters in the kernel, " + std::to_string(k.count) +
           " declared";
  for (int i = 0; i < k.count; ++i)
    if (head[i].name != k.params[i].name || head[i].kind != k.params[i].kind)
      return "parameter " + std::to_string(i) + ": kernel has " + describe(head[i]) + ", declared " +
             describe({k.params[i].name, k.params[i].kind});
  return {};
}

}  // namespace

TEST_CASE("every declared kernel's template head matches its declaration", "[kernels][signature]") {
  for (auto const& k : fa::signature::kKernels) {
    INFO(k.name << " in " << k.file);
    auto const head = template_head(fl::test::kernel_file_text(k.file), k.name);
    REQUIRE(head);
    CHECK(mismatch(k, *head).empty());
    if (!mismatch(k, *head).empty()) FAIL(mismatch(k, *head));
  }
}

TEST_CASE("the head reader sees a moved, retyped or extra parameter", "[kernels][signature]") {
  auto const& k = fa::signature::kFa1BwdStep;  // six parameters, the last a bool
  auto const head_of = [](std::string const& list) {
    return template_head(
        "template <" + list + ">\n__global__ void __launch_bounds__(32 * kNWarps) fa1_bwd_step(int)",
        "fa1_bwd_step");
  };
  auto const same =
      head_of("typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, bool Is_causal");
  REQUIRE(same);
  CHECK(mismatch(k, *same).empty());
  auto const swapped =
      head_of("typename Element, int kHeadDim, int kBlockN, int kBlockM, int kNWarps, bool Is_causal");
  REQUIRE(swapped);
  CHECK(mismatch(k, *swapped) == "parameter 2: kernel has int kBlockN, declared int kBlockM");
  auto const retyped =
      head_of("typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, int Is_causal");
  REQUIRE(retyped);
  CHECK(mismatch(k, *retyped) == "parameter 5: kernel has int Is_causal, declared bool Is_causal");
  auto const extra = head_of(
      "typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, bool Is_causal, int kX");
  REQUIRE(extra);
  CHECK(mismatch(k, *extra) == "7 parameters in the kernel, 6 declared");
  // A trailing defaulted parameter is not passed by the host; a default before a plain one is not C++.
  auto const defaulted = head_of(
      "typename Element, int kHeadDim, int kBlockM, int kBlockN, int kNWarps, bool Is_causal, class L = X");
  REQUIRE(defaulted);
  CHECK(mismatch(k, *defaulted).empty());
  CHECK_FALSE(
      head_of("typename Element, int kHeadDim = 64, int kBlockM, int kBlockN, int kNWarps, bool Is_causal"));
}
