// fa3_sm90_bwd under NVRTC on this machine (no GPU needed): every default config (d 64/128/256, fp16/bf16,
// causal or not) and the deterministic mode compile for sm_90a without spills, with setmaxnreg honoured and
// no serialised wgmma; a config the host rejects is rejected by the kernel too (both read
// kernels_src/fa3_sm90_bwd_config.h); the backward mutant switches sit on their lines and compile.
#include <catch2/catch.hpp>

#include <set>

#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
#include "kernels_src/fa3_sm90_bwd_config.h"
#include "runtime/nvrtc_compiler.hpp"
#include "tests/kernels_src/kernels_support.hpp"

using namespace fl;
using namespace fl::device;
using common::Precision;
using runtime::TargetArch;

namespace {

Problem bwd_problem(int d, bool causal, Precision dtype) {
  return headline_problem(2048, d, causal, dtype, Direction::backward);
}

// One NVRTC program (one front-end pass) holding every kernel of `instances`; each main kernel compiled
// without spills, and ptxas neither serialised a wgmma nor ignored a setmaxnreg.
void compiles_without_spills(std::vector<std::pair<Config, Problem>> const& instances) {
  Fa3Sm90BwdFamily const f;
  auto request = device::make_family_request(f, instances.front().first, instances.front().second,
                                             {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE(request);
  std::set<std::string> names;
  for (auto const& [c, p] : instances) {
    INFO(to_string(c));
    REQUIRE_FALSE(f.violates(c, p));
    for (auto const& name : f.name_expressions(c, p)) names.insert(name);
  }
  request->name_expressions.assign(names.begin(), names.end());
  auto const program = runtime::compile(request.value());
  INFO((program.ok() ? std::string() : program.error().log));
  REQUIRE(program);
  CHECK(program->log.find("serialized") == std::string::npos);
  CHECK(program->log.find("setmaxnreg' ignored") == std::string::npos);
  for (auto const& name : names) {
    auto const* r = program->resources_of(name);
    REQUIRE(r);
    INFO(name << ": " << r->registers << " registers, " << r->spill_store_bytes << " spill bytes");
    CHECK_FALSE(r->spills());
  }
}

}  // namespace

TEST_CASE("fa3_sm90_bwd default configs compile for sm_90a without spills", "[kernels][nvrtc]") {
  Fa3Sm90BwdFamily const f;
  for (int d : {64, 128, 256}) {
    INFO("d" << d);
    std::vector<std::pair<Config, Problem>> instances;
    for (bool causal : {false, true})
      for (auto dtype : {Precision::fp16, Precision::bf16}) {
        auto const p = bwd_problem(d, causal, dtype);
        instances.emplace_back(f.default_config(p), p);
      }
    auto const p = bwd_problem(d, true, Precision::bf16);
    instances.emplace_back(f.reproducible_config(p), p);  // the deterministic dQ order
    compiles_without_spills(instances);
  }
}

TEST_CASE(
    "fa3_sm90_bwd with one consumer warpgroup and one stage, and with dQ by TMA bulk reduce-add, "
    "compiles without spills",
    "[kernels][nvrtc]") {
  Fa3Sm90BwdFamily const f;
  auto const p = bwd_problem(128, false, Precision::bf16);
  Config one = f.default_config(p);
  one["kConsumers"] = 1;
  one["kBlockN"] = 64;
  one["kStages"] = 1;
  Config bulk = f.default_config(p);
  bulk["kDqMode"] = fa3::kDqBulk;
  auto const causal = bwd_problem(128, true, Precision::fp16);
  Config bulk_causal = f.default_config(causal);
  bulk_causal["kDqMode"] = fa3::kDqBulk;
  compiles_without_spills({{one, p}, {bulk, p}, {bulk_causal, causal}});
}

TEST_CASE("a config fa3_sm90_bwd's host side rejects is rejected by the kernel too", "[kernels][nvrtc]") {
  Fa3Sm90BwdFamily const f;
  auto const p = bwd_problem(128, false, Precision::bf16);
  auto c = f.default_config(p);
  c["kBlockM"] = 128;  // d128: dK + dV + S^T + dP^T exceed the consumer's registers
  REQUIRE(f.violates(c, p));
  auto const program = device::compile_family_config(f, c, p, {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE_FALSE(program);
  CHECK(program.error().log.find("fa3_sm90_bwd_config.h") != std::string::npos);
}

TEST_CASE("fa3_sm90_bwd carries the backward mutant switches, and each compiles", "[kernels][nvrtc]") {
  // ds_of and dk_scale_of (fa_backward.cuh) serve every backward; dq-overwrite at the consumer's dQ
  // additions (REDs, bulk reduce-add), bwd-race at the barrier before dQ reads the dS^T tile.
  auto const dq_add = test::kernel_file_text("fa3_sm90_bwd_dq_add.cuh");
  CHECK(test::mutant_switch_lines(dq_add, "BWD_DQ_OVERWRITE") == 2);
  CHECK(test::mutant_switch_lines(test::kernel_file_text("fa3_sm90_bwd_consumer.cuh"), "BWD_RACE") == 1);
  Fa3Sm90BwdFamily const f;
  auto const p = bwd_problem(64, true, Precision::bf16);
  auto const program =
      device::compile_family_config(f, f.reproducible_config(p), p,
                                    {TargetArch::sm_90a,
                                     test::kernels_dir(),
                                     {"FA_MUTANT_BWD_MISSING_DELTA", "FA_MUTANT_BWD_DK_MISSING_SCALE",
                                      "FA_MUTANT_BWD_DQ_OVERWRITE", "FA_MUTANT_BWD_RACE"}});
  INFO((program.ok() ? std::string() : program.error().log));
  CHECK(program);
}
