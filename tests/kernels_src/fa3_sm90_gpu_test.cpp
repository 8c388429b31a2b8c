// fa3_sm90 on the GPU: default configs and each mechanism switched off, on small awkward problems (odd n,
// tails, causal with fully masked rows, n_q != n_k, GQA) over every numerics input family, judged by
// numerics' reference and tolerance model; the dynamic tile scheduler; every forward mutant is caught. FP8:
// fa3_sm90_fp8_gpu_test.cpp. Skipped where there is no GPU.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
#include "device/family_runner.hpp"
#include "device/run/device_problem.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "runtime/device.hpp"
#include "tests/kernels_src/edge_check.hpp"
#include "tests/kernels_src/kernels_support.hpp"

using namespace fl;
using namespace fl::device;
using common::Precision;

namespace {

bool passes_edge_problems(std::vector<std::string> const& mutants, int d, bool causal, Precision dtype,
                          Config const* override_config = nullptr) {
  return test::passes_edge_problems(Fa3Sm90Family{}, mutants, d, causal, dtype, override_config);
}

}  // namespace

TEST_CASE("fa3_sm90 default configs are correct on awkward problems", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  test::for_each_16bit_case(
      [](int d, bool causal, Precision dtype) { CHECK(passes_edge_problems({}, d, causal, dtype)); });
}

TEST_CASE("fa3_sm90 is correct with each mechanism switched off", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  Fa3Sm90Family const f;
  auto const base = f.default_config(headline_problem(1024, 128, false, Precision::bf16, Direction::forward));
  for (auto [name, value] : std::vector<std::pair<char const*, int>>{{"kPingPong", 0},
                                                                     {"kIntraWgOverlap", 0},
                                                                     {"kPersistent", 0},
                                                                     {"kPersistent", 2},
                                                                     {"kSeparateO", 1},
                                                                     {"kStages", 3},
                                                                     {"kConsumers", 1}}) {
    Config c = base;
    c["kBlockN"] = 128;
    c[name] = value;
    if (c["kConsumers"] == 1) c["kPingPong"] = 0;
    INFO(to_string(c));
    for (bool causal : {false, true}) CHECK(passes_edge_problems({}, 128, causal, Precision::bf16, &c));
  }
}

TEST_CASE("fa3_sm90's dynamic tile scheduler computes every tile, launch after launch", "[gpu][kernels]") {
  // Many more tiles than CTAs (8 query blocks x 64 heads = 512 against at most 132 CTAs), three launches on
  // one problem's buffers with O poisoned before each: every launch must start from zeroed counters (the
  // last CTA of the one before zeroes them) and give the bits of one CTA per tile; so must the same with
  // kSeparateO, whose Q of tile t+1 lands while tile t's O is stored.
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  Fa3Sm90Family const f;
  for (bool causal : {true, false}) {
    auto p = headline_problem(1024, 128, causal, Precision::bf16, Direction::forward);
    p.shape = {4, 16, 4, 1000, 1000, 128, causal, 0.0};
    Config dynamic = f.default_config(p);
    dynamic["kBlockN"] = 128;
    dynamic["kPersistent"] = 2;
    Config per_tile = dynamic;
    per_tile["kPersistent"] = 0;
    INFO(to_string(dynamic) << (causal ? " causal" : " full"));
    auto const inputs = numerics::gpu::make_normal_inputs(p, 5);
    auto outputs_of = [&](Config const& c, int launches) {
      auto const program =
          device::compile_family_config(f, c, p, {runtime::TargetArch::sm_90a, test::kernels_dir(), {}});
      INFO((program.ok() ? std::string() : program.error().log));
      REQUIRE(program);
      auto runner = FamilyRunner::load(f, c, p, program.value());
      REQUIRE(runner);
      auto dp = device::DeviceProblem::create(p, inputs, f.scratch(c, p));
      REQUIRE(dp);
      std::vector<device::HostOutputs> out;
      for (int i = 0; i < launches; ++i) {
        REQUIRE(dp->o.fill_bytes(0xFF));
        REQUIRE(runner->run(dp->params));
        auto host = dp->download(p);
        REQUIRE(host);
        out.push_back(host.value());
      }
      return out;
    };
    auto const expected = outputs_of(per_tile, 1).front();
    Config separate = dynamic;  // and with Q released before the epilogue (O in its own tile)
    separate["kSeparateO"] = 1;
    for (Config const* c : {&dynamic, &separate}) {
      auto const runs = outputs_of(*c, 3);
      for (std::size_t i = 0; i < runs.size(); ++i) {
        INFO(to_string(*c) << " launch " << i);
        CHECK(runs[i].o == expected.o);
        CHECK(runs[i].lse == expected.lse);
      }
    }
  }
}

TEST_CASE("fa3_sm90 forward mutants are caught by the input families", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  for (auto const& c : test::forward_mutant_cases()) {
    INFO(c.switch_name);
    CHECK_FALSE(passes_edge_problems({c.switch_name}, 64, c.causal, Precision::bf16));
  }
}
