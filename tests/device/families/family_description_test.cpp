#include "device/families/family_description.hpp"

#include <catch2/catch.hpp>

#include <set>

#include "device/families/families.hpp"
#include "device/families/registry.hpp"

using namespace fl::device;
using fl::common::Precision;

namespace {

// A description with only the required functions: every optional answer must be Family's default.
std::vector<ParamSpec> two_params() {
  return {{"kBlockM", {64, 128}, "rows"}, {"kBlockN", {32}, "keys"}};
}
FamilyDescription const kMinimal{
    .name = "minimal",
    .source_file = [](Problem const&) -> std::string { return "minimal.cu"; },
    .parameters = two_params,
    .unsupported = [](Problem const&) -> std::optional<std::string> { return std::nullopt; },
    .violates = [](Config const& c, Problem const&) -> std::optional<std::string> {
      if (value_or(c, "kBlockM", 0) == 128) return "kBlockM 128 refused";
      return std::nullopt;
    },
    .default_config =
        [](Problem const&) {
          return Config{{"kBlockM", 64}, {"kBlockN", 32}};
        },
    .name_expressions = [](Config const&, Problem const&) { return std::vector<std::string>{"k<64>"}; },
    .launches = [](Config const&, Problem const&) { return std::vector<LaunchStep>{LaunchStep{}}; },
};

}  // namespace

TEST_CASE("a described family answers with its description, and Family's defaults where it has none",
          "[device]") {
  DeclaredFamily<kMinimal> const f;
  auto const p = headline_problem(1024, 64, false, Precision::bf16, Direction::forward);
  CHECK(f.name() == "minimal");
  CHECK(f.source_file(p) == "minimal.cu");
  CHECK(f.parameters().size() == 2);
  CHECK(enumerate_space(f, p).size() == 1);  // violates() refuses kBlockM 128
  CHECK(*f.violates({{"kBlockM", 128}}, p) == "kBlockM 128 refused");
  CHECK(f.reproducible_config(p) == f.default_config(p));
  CHECK(f.scratch(f.default_config(p), p).total() == 0);
  CHECK(f.tile_rows_and_keys(f.default_config(p), p) == std::pair{64, 32});
  CHECK(f.tensor_maps(f.default_config(p), p, {}).empty());
}

TEST_CASE("the registry serves every declared family once, in kFamilies' order", "[device]") {
  auto const families = all_families();
  REQUIRE(families.size() == std::size(kFamilies));
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < families.size(); ++i) {
    CHECK(families[i]->name() == kFamilies[i]->name);
    names.insert(families[i]->name());
  }
  CHECK(names.size() == families.size());
  CHECK(family_names() ==
        "naive, fa1, fa2_sm80, fa2_sm80_bwd, fa2_fp8, fa1_bwd, fa3_sm90, fa3_sm90_bwd, flash_decode");
}

TEST_CASE("a family's optional answers reach it through its description", "[device]") {
  auto const p = headline_problem(2048, 128, false, Precision::bf16, Direction::backward);
  Fa2Sm80BwdFamily const f;
  CHECK(f.reproducible_config(p) == fa2_sm80_bwd::deterministic_config(p));
  auto atomic = f.default_config(p);
  atomic["kDqAtomic"] = 1;  // dQ accumulated in fp32 scratch
  CHECK(f.scratch(atomic, p).dq_accum > 0);
  auto const fwd = headline_problem(2048, 128, false, Precision::bf16, Direction::forward);
  Fa3Sm90Family const fa3;
  CHECK(fa3.tile_rows_and_keys(fa3.default_config(fwd), fwd).first == 128);  // 2 consumers x 64 rows
}
