// name_expression: a kernel's name expression from its declared template parameters (kernels_src/
// fa_kernel_signatures.h) and values by name; tests/kernels_src/kernel_signature_test.cpp checks the
// declarations against the kernels.
#include "device/families/name_expression.hpp"

#include <catch2/catch.hpp>

#include "device/families/families.hpp"

TEST_CASE("name expressions follow the declared order, with every value by name", "[device][families]") {
  using fl::common::Precision;
  using fl::device::name_expression;
  fl::device::Config const values{{"kHeadDim", 128}, {"kBlockM", 128}, {"kBlockN", 32}, {"kNWarps", 4},
                                  {"kStages", 1},    {"kWarpsN", 1},   {"kQInRegs", 0}, {"kEpilogueSmem", 1},
                                  {"Is_causal", 0},  {"kUnused", 7}};
  CHECK(name_expression(fa::signature::kFa2Sm80Fwd, Precision::bf16, values) ==
        "fa2_sm80_fwd<__nv_bfloat16, 128, 128, 32, 4, 1, 1, false, true, false>");
  auto missing = values;
  missing.erase("kStages");
  CHECK_THROWS_WITH(name_expression(fa::signature::kFa2Sm80Fwd, Precision::fp16, missing),
                    "fa2_sm80_fwd: no value for template parameter kStages");
}

TEST_CASE("every sm80-era family names its default kernels as before the declarations",
          "[device][families]") {
  using namespace fl::device;
  using fl::common::Precision;
  // The strings the families built by concatenation (2026-12-01), for the default configs of that day.
  auto const fwd = headline_problem(1024, 128, true, Precision::bf16, Direction::forward);
  auto const bwd = headline_problem(1024, 64, false, Precision::bf16, Direction::backward);
  auto const names = [](Family const& f, Problem const& p) {
    return f.name_expressions(f.default_config(p), p);
  };
  // fa2_sm80's default of that day (its d128 causal default is the grid's 64 x 64 since 2026-12-03).
  Config const fa2_default_then{{"kBlockM", 128}, {"kBlockN", 32}, {"kNWarps", 4},      {"kStages", 1},
                                {"kWarpsN", 1},   {"kQInRegs", 0}, {"kEpilogueSmem", 1}};
  CHECK(Fa2Sm80Family{}.name_expressions(fa2_default_then, fwd) ==
        std::vector<std::string>{"fa2_sm80_fwd<__nv_bfloat16, 128, 128, 32, 4, 1, 1, false, true, true>"});
  CHECK(names(Fa1Family{}, fwd) ==
        std::vector<std::string>{"fa1_fwd_step<__nv_bfloat16, 128, 128, 128, 32, 4, true>"});
  CHECK(names(NaiveFamily{}, fwd) ==
        std::vector<std::string>{"naive_scores<__nv_bfloat16, 128, 8, 2, 32, true>",
                                 "naive_softmax<__nv_bfloat16, 256, 32>",
                                 "naive_output<__nv_bfloat16, 128, 8, 2, true>"});
  CHECK(names(Fa1BwdFamily{}, bwd) ==
        std::vector<std::string>{"fa_bwd_preprocess<__nv_bfloat16, 64, 4, false>",
                                 "fa1_bwd_step<__nv_bfloat16, 64, 64, 64, 4, false>",
                                 "fa_bwd_dq_convert<__nv_bfloat16, 64>"});
  CHECK(names(Fa2Sm80BwdFamily{}, bwd) ==
        std::vector<std::string>{"fa_bwd_preprocess<__nv_bfloat16, 64, 4, false>",
                                 "fa2_sm80_bwd_dkdv<__nv_bfloat16, 64, 64, 64, 4, 1, 0, false>",
                                 "fa2_sm80_bwd_dq<__nv_bfloat16, 64, 64, 64, 4, false>"});
  auto const fp8 = headline_problem(1024, 128, false, Precision::fp8_e4m3, Direction::forward);
  CHECK(names(Fa2Fp8Family{}, fp8) ==
        std::vector<std::string>{"fa2_fp8_fwd<__nv_fp8_e4m3, 128, 128, 64, 8, 1, false, false, false>"});
}
