// The backward families (fa2_sm80_bwd in both dQ modes, fa1_bwd): their default configs compile without
// spills (NVRTC, no GPU needed); every config of both spaces compiles ([.nvrtc-space], run where there are
// cores: `BWD_SPACE=1 scripts/gpu.sh bwd`); host constraints and static_asserts agree; each backward mutant
// switch sits once per kernel path. On the GPU: the defaults are correct on every input family, the
// deterministic mode gives the same bits run to run, and the backward mutants are caught in every path.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <thread>

#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
#include "device/family_runner.hpp"
#include "device/run/device_problem.hpp"
#include "numerics/gpu/kernel_check.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "runtime/device.hpp"
#include "tests/kernels_src/kernels_support.hpp"
#include "tuner/compile/space_compile.hpp"
#include "tuner/run/benchmark.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;
using common::Precision;
using runtime::TargetArch;

namespace {

Problem bwd_problem(int d, bool causal, Precision dtype) {
  return headline_problem(1024, d, causal, dtype, Direction::backward);
}

// A backward family's configs to check: its default and, for fa2_sm80_bwd, the deterministic one.
std::vector<Config> configs_of(Family const& f, Problem const& p) {
  std::vector<Config> out{f.default_config(p)};
  if (f.name() == "fa2_sm80_bwd") out.push_back(fa2_sm80_bwd::deterministic_config(p));
  return out;
}

}  // namespace

TEST_CASE("backward default configs compile, without spills on sm_90a", "[kernels][nvrtc]") {
  Fa2Sm80BwdFamily const fa2;
  Fa1BwdFamily const fa1;
  for (Family const* f : {static_cast<Family const*>(&fa2), static_cast<Family const*>(&fa1)})
    for (int d : {64, 128}) {
      // One program per family and head dim holding every instance: one NVRTC front-end pass.
      auto const first = bwd_problem(d, false, Precision::bf16);
      auto request = device::make_family_request(*f, f->default_config(first), first,
                                                 {TargetArch::sm_90a, test::kernels_dir(), {}});
      REQUIRE(request);
      std::set<std::string> names;
      for (bool causal : {false, true})
        for (auto dtype : {Precision::fp16, Precision::bf16}) {
          auto const p = bwd_problem(d, causal, dtype);
          for (auto const& c : configs_of(*f, p)) {
            INFO(to_string(c));
            CHECK_FALSE(f->violates(c, p));
            for (auto const& name : f->name_expressions(c, p)) names.insert(name);
          }
        }
      request->name_expressions.assign(names.begin(), names.end());
      auto const program = runtime::compile(request.value());
      INFO(f->name() << " d" << d << (program.ok() ? std::string() : program.error().log));
      REQUIRE(program);
      for (auto const& name : names) {
        auto const* r = program->resources_of(name);
        REQUIRE(r);
        INFO(name << ": " << r->registers << " registers");
        CHECK_FALSE(r->spills());
      }
    }
}

TEST_CASE("backward configs the host rejects do not compile either", "[kernels][nvrtc]") {
  Fa2Sm80BwdFamily const fa2;
  Fa1BwdFamily const fa1;
  auto const p = bwd_problem(64, false, Precision::bf16);
  auto bad_stages = fa2.default_config(p);
  bad_stages["kStages"] = 3;
  auto bad_tiles = fa2.default_config(p);
  bad_tiles["kBlockN"] = 96;  // 96 keys over 8 warps: not whole 16-key tiles
  auto bad_fa1 = fa1.default_config(p);
  bad_fa1["kBlockM"] = 48;  // neither 32 nor a multiple of 64: no dS^T swizzle
  for (auto [f, c] :
       {std::pair<Family const*, Config>{&fa2, bad_stages}, {&fa2, bad_tiles}, {&fa1, bad_fa1}}) {
    INFO(f->name() << " " << to_string(c));
    CHECK(f->violates(c, p));
    auto const program =
        device::compile_family_config(*f, c, p, {TargetArch::sm_90a, test::kernels_dir(), {}});
    CHECK_FALSE(program);
  }
}

TEST_CASE("backward mutant switches: one line per kernel path, all compile", "[kernels][nvrtc]") {
  // fa_backward.cuh: ds_of and dk_scale_of serve every path. fa2_sm80_bwd.cu: dq-overwrite in the atomic
  // accumulation, bwd-race at the reuse barrier of kStages 1 and of kStages 2; fa2_sm80_bwd_dq.cuh:
  // dq-overwrite in the dQ pass. fa1_bwd.cu: dq-overwrite in the dQ read-modify-write, bwd-race at its
  // reuse barrier. fa_bwd_blocks.cuh (the block steps both families share) holds none.
  auto const shared = test::kernel_file_text("fa_backward.cuh"),
             blocks = test::kernel_file_text("fa_bwd_blocks.cuh"),
             fa2_dkdv = test::kernel_file_text("fa2_sm80_bwd.cu"),
             fa2_dq = test::kernel_file_text("fa2_sm80_bwd_dq.cuh"),
             fa1 = test::kernel_file_text("fa1_bwd.cu");
  CHECK(test::mutant_switch_lines(fa2_dkdv, "BWD_DQ_OVERWRITE") == 1);
  CHECK(test::mutant_switch_lines(fa2_dq, "BWD_DQ_OVERWRITE") == 1);
  CHECK(test::mutant_switch_lines(fa2_dq, "BWD_RACE") == 0);
  for (std::string id : {"BWD_MISSING_DELTA", "BWD_DK_MISSING_SCALE", "BWD_DQ_OVERWRITE", "BWD_RACE"})
    CHECK(test::mutant_switch_lines(blocks, id) == 0);
  auto const fa2 = fa2_dkdv + fa2_dq;
  CHECK(test::mutant_switch_lines(shared, "BWD_MISSING_DELTA") == 1);
  CHECK(test::mutant_switch_lines(shared, "BWD_DK_MISSING_SCALE") == 1);
  CHECK(test::mutant_switch_lines(shared, "BWD_DQ_OVERWRITE") +
            test::mutant_switch_lines(shared, "BWD_RACE") ==
        0);
  for (std::string id : {"BWD_MISSING_DELTA", "BWD_DK_MISSING_SCALE"})
    CHECK(test::mutant_switch_lines(fa2, id) + test::mutant_switch_lines(fa1, id) == 0);
  CHECK(test::mutant_switch_lines(fa2, "BWD_DQ_OVERWRITE") == 2);
  CHECK(test::mutant_switch_lines(fa2, "BWD_RACE") == 2);
  CHECK(test::mutant_switch_lines(fa1, "BWD_DQ_OVERWRITE") == 1);
  CHECK(test::mutant_switch_lines(fa1, "BWD_RACE") == 1);

  std::vector<std::string> const switches{"FA_MUTANT_BWD_MISSING_DELTA", "FA_MUTANT_BWD_DK_MISSING_SCALE",
                                          "FA_MUTANT_BWD_DQ_OVERWRITE", "FA_MUTANT_BWD_RACE"};
  Fa2Sm80BwdFamily const f2;
  Fa1BwdFamily const f1;
  auto const p = bwd_problem(64, true, Precision::bf16);
  for (auto [f, c] : {std::pair<Family const*, Config>{&f2, f2.default_config(p)},
                      {&f2, fa2_sm80_bwd::deterministic_config(p)},
                      {&f1, f1.default_config(p)}}) {
    auto const program =
        device::compile_family_config(*f, c, p, {TargetArch::sm_90a, test::kernels_dir(), switches});
    INFO(f->name() << " " << to_string(c) << (program.ok() ? std::string() : program.error().log));
    CHECK(program);
  }
}

TEST_CASE("every config of both backward spaces compiles for sm_90a", "[.nvrtc-space][kernels]") {
  // Hidden: ~100 NVRTC programs per head dim, minutes on this machine's 2 cores; BWD_SPACE=1
  // scripts/gpu.sh bwd runs it on the GPU machine's 16. Spills are allowed here (the tuner prunes them after
  // compiling).
  Fa2Sm80BwdFamily const fa2;
  Fa1BwdFamily const fa1;
  unsigned const threads = std::max(1u, std::thread::hardware_concurrency());
  for (Family const* f : {static_cast<Family const*>(&fa2), static_cast<Family const*>(&fa1)})
    for (int d : {64, 128}) {
      auto const p = bwd_problem(d, true, Precision::bf16);
      auto const entries = compile_space(*f, p, {TargetArch::sm_90a, test::kernels_dir(), {}}, threads);
      CHECK(entries.size() == enumerate_space(*f, p).size());
      int spilling = 0;
      for (auto const& e : entries) {
        INFO(f->name() << " d" << d << " " << to_string(e.config) << ": " << e.error);
        CHECK(e.compiled);
        spilling += e.spill_bytes > 0;
      }
      WARN(f->name() << " d" << d << ": " << entries.size() << " configs, " << spilling << " spill");
    }
}

namespace {

// Every input family on the awkward problems; false at the first failure (reported).
bool passes(Family const& f, Config const& config, std::vector<std::string> const& mutants, int d,
            bool causal) {
  auto const base = bwd_problem(d, causal, Precision::bf16);
  auto const program =
      device::compile_family_config(f, config, base, {TargetArch::sm_90a, test::kernels_dir(), mutants});
  INFO((program.ok() ? std::string() : program.error().log));
  REQUIRE(program);
  for (auto const input_family : numerics::all_input_families())
    for (auto p : test::edge_problems(d, causal, Precision::bf16)) {
      if (!numerics::gpu::family_applies(input_family, causal)) continue;
      p.direction = Direction::backward;
      CheckOptions options;
      options.input_family = input_family;
      auto const check = check_config(f, config, p, program.value(), options);
      REQUIRE(check);
      if (!check->pass) {
        UNSCOPED_INFO(f.name() << " " << to_string(config) << " " << describe(p) << " "
                               << numerics::name(input_family) << ": " << check->summary);
        return false;
      }
    }
  return true;
}

}  // namespace

TEST_CASE("backward families: both dQ modes and fa1_bwd are correct on every input family",
          "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  Fa2Sm80BwdFamily const fa2;
  Fa1BwdFamily const fa1;
  for (int d : {64, 128})
    for (bool causal : {false, true}) {
      auto const p = bwd_problem(d, causal, Precision::bf16);
      INFO("d" << d << (causal ? " causal" : " full"));
      CHECK(passes(fa2, fa2.default_config(p), {}, d, causal));
      CHECK(passes(fa2, fa2_sm80_bwd::deterministic_config(p), {}, d, causal));
      CHECK(passes(fa1, fa1.default_config(p), {}, d, causal));
    }
}

TEST_CASE("backward mutants are caught in every kernel path", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  Fa2Sm80BwdFamily const fa2;
  Fa1BwdFamily const fa1;
  auto const p = bwd_problem(64, false, Precision::bf16);
  for (auto [f, c] : {std::pair<Family const*, Config>{&fa2, fa2.default_config(p)},
                      {&fa2, fa2_sm80_bwd::deterministic_config(p)},
                      {&fa1, fa1.default_config(p)}})
    for (std::string s :
         {"FA_MUTANT_BWD_MISSING_DELTA", "FA_MUTANT_BWD_DK_MISSING_SCALE", "FA_MUTANT_BWD_DQ_OVERWRITE"}) {
      INFO(f->name() << " " << to_string(c) << " " << s);
      CHECK_FALSE(passes(*f, c, {s}, 64, false));
    }
}

TEST_CASE("fa2_sm80_bwd deterministic mode gives the same bits run to run", "[gpu][kernels]") {
  auto context = runtime::PrimaryContext::retain(0);
  REQUIRE(context);
  Fa2Sm80BwdFamily const f;
  auto p = bwd_problem(128, true, Precision::bf16);
  p.shape = {2, 8, 2, 1000, 1000, 128, true, 0.0};
  auto const config = fa2_sm80_bwd::deterministic_config(p);
  REQUIRE(value_or(config, "kDqAtomic", -1) == 0);
  auto const program =
      device::compile_family_config(f, config, p, {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE(program);
  auto const inputs = numerics::gpu::make_normal_inputs(p, 3);
  auto const forward = numerics::gpu::reference_forward(p, inputs);
  auto runner = FamilyRunner::load(f, config, p, program.value());
  REQUIRE(runner);
  std::vector<device::HostOutputs> runs;
  for (int i = 0; i < 3; ++i) {
    auto dp = device::DeviceProblem::create(p, inputs, f.scratch(config, p), &forward);
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
