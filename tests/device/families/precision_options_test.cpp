// Precision options (Family::precision_options): config keys that claim a precision, judged by their own
// bound, rather than tune speed (naive's kScoreBits = 16). --config takes them; the searched space holds
// each at the default config's value, so fa-tune never proposes a candidate its check (the problem's
// recipe: fp32 scores) would reject for the claim alone.
#include <catch2/catch.hpp>

#include <set>

#include "device/families/families.hpp"
#include "device/families/registry.hpp"

using namespace fl::device;
using fl::common::Precision;

namespace {

// Every problem class the family runs: head dims x masks x dtypes x directions, prefill and decode shapes.
std::vector<Problem> supported_problems(Family const& family) {
  std::vector<Problem> out;
  for (int d : {64, 128, 256})
    for (bool causal : {false, true})
      for (auto dtype : {Precision::fp16, Precision::bf16, Precision::fp8_e4m3, Precision::fp8_e5m2})
        for (auto direction : {Direction::forward, Direction::backward})
          for (int seqlen_q : {1024, 1}) {
            auto p = headline_problem(1024, d, causal, dtype, direction);
            p.shape.seqlen_q = seqlen_q;
            if (!family.unsupported(p)) out.push_back(p);
          }
  return out;
}

std::set<std::string> keys_of(Config const& config) {
  std::set<std::string> keys;
  for (auto const& [key, value] : config) keys.insert(key);
  return keys;
}

}  // namespace

TEST_CASE("naive's kScoreBits is a precision option, not a tunable: its space holds 32 only", "[device]") {
  NaiveFamily const f;
  for (auto const& spec : f.parameters()) CHECK(spec.name != "kScoreBits");
  REQUIRE(f.precision_options().size() == 1);
  CHECK(f.precision_options().front().name == "kScoreBits");
  CHECK(f.precision_options().front().values == std::vector<int>{32, 16});  // the default first
  for (auto const& p : supported_problems(f)) {
    INFO(describe(p));
    auto const axes = space_axes(f, p);
    REQUIRE(axes.size() == f.parameters().size() + 1);
    CHECK(axes.back().name == "kScoreBits");
    CHECK(axes.back().values == std::vector<int>{32});
    auto const space = enumerate_space(f, p);
    REQUIRE_FALSE(space.empty());
    // 2 x 2 x 2 GEMM and softmax configs at most: the 16-bit S twins are gone, not halved into the rest.
    CHECK(space.size() <= 8);
    for (auto const& config : space) {
      CHECK(config.at("kScoreBits") == 32);
      CHECK(f.score_precision(config, p) == Precision::fp32);
    }
  }
}

TEST_CASE("naive given kScoreBits=16 (--config) still reaches its kernels, scratch and check bound",
          "[device]") {
  NaiveFamily const f;
  auto const p = headline_problem(1024, 128, false, Precision::bf16, Direction::forward);
  auto config = f.default_config(p);
  CHECK(config.at("kScoreBits") == 32);
  auto const fp32_scratch = f.scratch(config, p).s;
  config["kScoreBits"] = 16;
  CHECK_FALSE(unknown_config_key(f, config));
  CHECK_FALSE(f.violates(config, p));
  auto const names = f.name_expressions(config, p);
  REQUIRE(names.size() == 3);
  CHECK(names[0] == "naive_scores<__nv_bfloat16, 128, 8, 2, 16, false>");
  CHECK(names[1] == "naive_softmax<__nv_bfloat16, 256, 16>");
  CHECK(f.score_precision(config, p) == Precision::bf16);
  CHECK(f.scratch(config, p).s * 2 == fp32_scratch);
  config["kScoreBits"] = 8;  // the kernels' rule still judges the value
  CHECK_THAT(*f.violates(config, p), Catch::Contains("kScoreBits must be 16 or 32"));
}

TEST_CASE("a --config key that is neither a tunable nor a precision option is named with both lists",
          "[device]") {
  NaiveFamily const f;
  auto const naive = unknown_config_key(f, {{"kNWarps", 8}, {"kBlockM", 64}});
  REQUIRE(naive);
  CHECK(*naive ==
        "kBlockM is not a tunable of naive (kNWarps, kStages, kSoftmaxThreads) nor a precision option "
        "(kScoreBits)");
  Fa2Sm80Family const fa2;
  auto const no_options = unknown_config_key(fa2, {{"kScoreBits", 16}});
  REQUIRE(no_options);
  CHECK_THAT(*no_options, Catch::StartsWith("kScoreBits is not a tunable of fa2_sm80 (kBlockM,"));
  CHECK_THAT(*no_options, !Catch::Contains("precision option"));
  CHECK_FALSE(unknown_config_key(
      fa2, fa2.default_config(headline_problem(1024, 128, false, Precision::bf16, Direction::forward))));
}

TEST_CASE("every family's default names exactly its tunables and precision options, at their first value",
          "[device]") {
  for (auto const& family : all_families()) {
    std::set<std::string> declared;
    for (auto const& spec : family->parameters()) declared.insert(spec.name);
    for (auto const& option : family->precision_options()) {
      CHECK(declared.insert(option.name).second);  // never both
      REQUIRE_FALSE(option.values.empty());
    }
    auto const problems = supported_problems(*family);
    CHECK_FALSE(problems.empty());
    for (auto const& p : problems) {
      INFO(family->name() << " " << describe(p));
      auto const fallback = family->default_config(p);
      CHECK(keys_of(fallback) == declared);
      CHECK_FALSE(unknown_config_key(*family, fallback));
      for (auto const& option : family->precision_options())
        CHECK(fallback.at(option.name) == option.values[0]);
    }
  }
  CHECK(precision_options_text() ==
        "naive's kScoreBits: 32 (the default) or 16, S in device memory: fp32, or the input type (PyTorch's "
        "math path)");
}
