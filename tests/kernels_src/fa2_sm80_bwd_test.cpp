// fa2_sm80 backward: compiles without spills at its defaults (NVRTC, no GPU needed); each backward mutant
// switch sits at one line; on the GPU the defaults are correct on awkward problems, deterministic (same
// bits run to run), and the backward mutants are caught.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "runtime/device.hpp"
#include "tests/kernels_src/kernels_support.hpp"
#include "tuner/compile/compile_config.hpp"
#include "tuner/families/fa2_sm80_bwd.hpp"
#include "tuner/run/benchmark.hpp"
#include "tuner/run/device_problem.hpp"
#include "tuner/run/family_runner.hpp"
#include "tuner/run/numerics_check.hpp"

using namespace fl;
using namespace fl::tuner;
using numerics::Precision;
using runtime::TargetArch;

namespace {

Problem bwd_problem(int d, bool causal, Precision dtype) {
  return headline_problem(1024, d, causal, dtype, Direction::backward);
}

std::string kernels_text() {
  std::string all;
  for (auto const& entry : std::filesystem::directory_iterator(test::kernels_dir())) {
    std::ifstream f(entry.path());
    std::stringstream ss;
    ss << f.rdbuf();
    all += ss.str() + "\n";
  }
  return all;
}

}  // namespace

TEST_CASE("fa2_sm80_bwd default configs compile, without spills on sm_90a", "[kernels][nvrtc]") {
  Fa2Sm80BwdFamily const f;
  for (auto arch : {TargetArch::sm_80, TargetArch::sm_90a})
    for (int d : {64, 128}) {
      auto const first = bwd_problem(d, false, Precision::bf16);
      auto request = make_family_request(f, f.default_config(first), first, {arch, test::kernels_dir(), {}});
      REQUIRE(request);
      request->name_expressions.clear();
      for (bool causal : {false, true})
        for (auto dtype : {Precision::fp16, Precision::bf16}) {
          auto const p = bwd_problem(d, causal, dtype);
          CHECK_FALSE(f.violates(f.default_config(p), p));
          for (auto const& name : f.name_expressions(f.default_config(p), p))
            request->name_expressions.push_back(name);
        }
      auto const program = runtime::compile(request.value());
      INFO((program.ok() ? std::string() : program.error().log));
      REQUIRE(program);
      for (auto const& name : request->name_expressions) {
        auto const* r = program->resources_of(name);
        REQUIRE(r);
        INFO(runtime::arch_name(arch) << " " << name << ": " << r->registers << " registers");
        if (arch == TargetArch::sm_90a) CHECK_FALSE(r->spills());
      }
    }
}

TEST_CASE("backward mutant switches: one line each, all compile", "[kernels][nvrtc]") {
  auto const text = kernels_text();
  std::vector<std::string> switches;
  for (std::string id : {"BWD_MISSING_DELTA", "BWD_DK_MISSING_SCALE", "BWD_DQ_OVERWRITE", "BWD_RACE"}) {
    std::string const name = "FA_MUTANT_" + id;
    std::regex const use("#\\s*if(n?def)?\\s+" + name + "\\b");
    INFO(name);
    CHECK(std::distance(std::sregex_iterator(text.begin(), text.end(), use), std::sregex_iterator()) == 1);
    switches.push_back(name);
  }
  Fa2Sm80BwdFamily const f;
  auto const p = bwd_problem(64, true, Precision::bf16);
  auto const program =
      compile_family_config(f, f.default_config(p), p, {TargetArch::sm_90a, test::kernels_dir(), switches});
  INFO((program.ok() ? std::string() : program.error().log));
  CHECK(program);
}

TEST_CASE("fa2_sm80_bwd family: three launches, constraints mirrored", "[kernels]") {
  Fa2Sm80BwdFamily const f;
  auto p = bwd_problem(128, true, Precision::bf16);
  CHECK(f.unsupported(headline_problem(1024, 128, true, Precision::bf16, Direction::forward)));
  CHECK(f.unsupported(bwd_problem(256, false, Precision::bf16)));
  auto const c = f.default_config(p);
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 3);
  CHECK(steps[1].grid.x == unsigned(1024 / 64));  // key blocks
  CHECK(steps[1].grid.y == unsigned(p.shape.heads_kv));
  CHECK(steps[2].grid.x == unsigned(1024 / 64));  // query blocks of the dQ pass
  auto bad = c;
  bad["kBlockN"] = 96;
  CHECK(f.violates(bad, p));
  bad = c;
  bad["kBlockM"] = 128;  // d128: dK/dV accumulators past the budget
  CHECK(f.violates(bad, p));
  for (auto const& config : enumerate_space(f, p)) CHECK_FALSE(f.violates(config, p));
}

namespace {

bool bwd_passes(std::vector<std::string> const& mutants, int d, bool causal) {
  Fa2Sm80BwdFamily const f;
  auto const base = bwd_problem(d, causal, Precision::bf16);
  auto const program = compile_family_config(f, f.default_config(base), base,
                                             {TargetArch::sm_90a, test::kernels_dir(), mutants});
  INFO((program.ok() ? std::string() : program.error().log));
  REQUIRE(program);
  for (auto const input_family : numerics::all_input_families())
    for (auto p : test::edge_problems(d, causal, Precision::bf16)) {
      if (!family_applies(input_family, causal)) continue;
      p.direction = Direction::backward;
      CheckOptions options;
      options.input_family = input_family;
      auto const check = check_config(f, f.default_config(base), p, program.value(), options);
      REQUIRE(check);
      if (!check->pass) {
        UNSCOPED_INFO(describe(p) << " " << numerics::name(input_family) << ": " << check->summary);
        return false;
      }
    }
  return true;
}

}  // namespace

TEST_CASE("fa2_sm80_bwd default configs are correct on awkward problems", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  for (int d : {64, 128})
    for (bool causal : {false, true}) {
      INFO("d" << d << (causal ? " causal" : " full"));
      CHECK(bwd_passes({}, d, causal));
    }
}

TEST_CASE("fa2_sm80_bwd backward mutants are caught", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  for (std::string s :
       {"FA_MUTANT_BWD_MISSING_DELTA", "FA_MUTANT_BWD_DK_MISSING_SCALE", "FA_MUTANT_BWD_DQ_OVERWRITE"}) {
    INFO(s);
    CHECK_FALSE(bwd_passes({s}, 64, false));
  }
}

TEST_CASE("fa2_sm80_bwd is deterministic: the same bits run to run", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  Fa2Sm80BwdFamily const f;
  auto p = bwd_problem(128, true, Precision::bf16);
  p.shape = {2, 8, 2, 1000, 1000, 128, true, 0.0};
  auto const program =
      compile_family_config(f, f.default_config(p), p, {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE(program);
  auto const inputs = make_normal_inputs(p, 3);
  auto const forward = reference_forward(p, inputs);
  auto runner = FamilyRunner::load(f, f.default_config(p), p, program.value());
  REQUIRE(runner);
  std::vector<HostOutputs> runs;
  for (int i = 0; i < 3; ++i) {
    auto dp = DeviceProblem::create(p, inputs, {}, &forward);
    REQUIRE(dp);
    REQUIRE(runner->run(dp->params));
    auto out = dp->download(p);
    REQUIRE(out);
    runs.push_back(out.value());
  }
  for (int i = 1; i < 3; ++i) {
    CHECK(runs[i].dq == runs[0].dq);
    CHECK(runs[i].dk == runs[0].dk);
    CHECK(runs[i].dv == runs[0].dv);
  }
}
