// fa3_sm90 under NVRTC on this machine (no GPU needed): default configs compile for sm_90a without spills
// and with setmaxnreg honoured, every mechanism switch compiles, a config the host rejects is rejected by
// the kernel too (both read kernels_src/fa3_sm90_config.h), and the generated wgmma header is what its
// generator writes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/precision.hpp"
#include "device/compile/compile_config.hpp"
#include "device/families/families.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "tests/kernels_src/compile_checks.hpp"
#include "tests/kernels_src/fa3_sm90_transpose_v_config.hpp"
#include "tests/kernels_src/kernels_support.hpp"

using namespace fl;
using namespace fl::device;
using common::Precision;
using runtime::TargetArch;

namespace {

Problem problem_of(int d, bool causal, Precision dtype) {
  return headline_problem(2048, d, causal, dtype, Direction::forward);
}

// Compiles `configs` of `p`'s family as one NVRTC program (one front-end pass) and checks each instance
// compiled without spills (or within `allowed` spill bytes, by name expression, where a config that spills
// was measured faster than the spill-free ones) and without ptxas serialising its wgmma.
void compiles_without_spills(std::vector<std::pair<Config, Problem>> const& instances,
                             std::map<std::string, std::size_t> const& allowed = {}) {
  Fa3Sm90Family const f;
  auto request = device::make_family_request(f, instances.front().first, instances.front().second,
                                             {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE(request);
  request->name_expressions.clear();
  for (auto const& [c, p] : instances) request->name_expressions.push_back(f.name_expressions(c, p).front());
  auto const program = runtime::compile(request.value());
  INFO((program.ok() ? std::string() : program.error().log));
  REQUIRE(program);
  // C7510-C7512: "wgmma.mma_async instructions are serialized" (a call, a register shortage...), and C7508:
  // setmaxnreg ignored. Either would make the kernel correct but slow.
  CHECK(program->log.find("serialized") == std::string::npos);
  CHECK(program->log.find("setmaxnreg' ignored") == std::string::npos);
  for (auto const& name : request->name_expressions) {
    auto const* r = program->resources_of(name);
    REQUIRE(r);
    INFO(name << ": " << r->registers << " registers, " << r->spill_store_bytes << " spill bytes");
    auto const allowance = allowed.find(name);
    if (allowance == allowed.end())
      CHECK_FALSE(r->spills());
    else
      CHECK(r->spill_store_bytes <= allowance->second);
  }
}

// d256's default, 128 x 80 (FlashAttention-3's tile), spills under NVRTC 13.0 (4 bytes full, 8 causal with
// its dynamic tile scheduler) and was measured faster than the spill-free 128 x 64
// (device/families/fa3_sm90.cpp, default_config): no more than that.
std::size_t d256_default_spill_bytes(bool causal) {
  return causal ? 8 : 4;
}

}  // namespace

TEST_CASE("fa3_sm90 default configs compile for sm_90a without spills", "[kernels][nvrtc]") {
  Fa3Sm90Family const f;
  std::vector<std::pair<Config, Problem>> instances;
  for (auto [d, causal, dtype] : std::vector<std::tuple<int, bool, Precision>>{
           {64, false, Precision::bf16}, {128, true, Precision::fp16}, {256, false, Precision::bf16}}) {
    auto const p = problem_of(d, causal, dtype);
    instances.emplace_back(f.default_config(p), p);
  }
  auto const& [d256, p256] = instances.back();
  compiles_without_spills(instances,
                          {{f.name_expressions(d256, p256).front(), d256_default_spill_bytes(false)}});
}

TEST_CASE("fa3_sm90 FP8 defaults and the V transpose compile for sm_90a without spills", "[kernels][nvrtc]") {
  Fa3Sm90Family const f;
  std::vector<std::pair<Config, Problem>> instances;
  for (auto [d, causal, dtype] :
       std::vector<std::tuple<int, bool, Precision>>{{64, false, Precision::fp8_e4m3},
                                                     {128, true, Precision::fp8_e4m3},
                                                     {256, false, Precision::fp8_e5m2}}) {
    auto const p = problem_of(d, causal, dtype);
    instances.emplace_back(f.default_config(p), p);
  }
  auto block = problem_of(128, false, Precision::fp8_e4m3);
  block.fp8.scaling = common::Fp8Scaling::per_block;
  block.fp8.block_rows = 128;
  instances.emplace_back(f.default_config(block), block);
  compiles_without_spills(instances);
  // The transpose kernels: every head dim, no spills.
  auto request = device::make_family_request(f, f.default_config(block), block,
                                             {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE(request);
  request->name_expressions = {"fa3_sm90_transpose_v<64>", "fa3_sm90_transpose_v<128>",
                               "fa3_sm90_transpose_v<256>"};
  test::compiles_spill_free(request.value());
}

TEST_CASE("fa3_sm90 FP8 with the in-kernel V transpose compiles for sm_90a without spills",
          "[kernels][nvrtc]") {
  // The defaults with kTransposeV = 1 (d256: 2 x 64, tests/kernels_src/fa3_sm90_transpose_v_config.hpp) at
  // every head dim, both masks, e4m3 and e5m2, and per-block scaling; then the tuner's neighbours of d128:
  // three stages, the dynamic order with kSeparateO, one and three consumer warpgroups.
  Fa3Sm90Family const f;
  std::vector<std::pair<Config, Problem>> instances;
  for (int d : {64, 128, 256})
    for (bool causal : {false, true})
      for (auto dtype : {Precision::fp8_e4m3, Precision::fp8_e5m2}) {
        auto const p = problem_of(d, causal, dtype);
        instances.emplace_back(test::fa3_in_kernel_transpose_config(f, p), p);
      }
  auto block = problem_of(128, false, Precision::fp8_e4m3);
  block.fp8.scaling = common::Fp8Scaling::per_block;
  block.fp8.block_rows = 128;
  instances.emplace_back(test::fa3_in_kernel_transpose_config(f, block), block);
  auto const p128 = problem_of(128, true, Precision::fp8_e4m3);
  Config const base = test::fa3_in_kernel_transpose_config(f, p128);
  for (auto const& changes : std::vector<std::vector<std::pair<char const*, int>>>{
           {{"kStages", 3}},
           {{"kPersistent", 2}, {"kSeparateO", 1}},
           {{"kConsumers", 1}, {"kPingPong", 0}, {"kBlockN", 64}},
           {{"kConsumers", 3}, {"kBlockN", 64}}}) {
    Config c = base;
    for (auto [name, value] : changes) c[name] = value;
    INFO(to_string(c));
    REQUIRE_FALSE(f.violates(c, p128));
    instances.emplace_back(c, p128);
  }
  for (auto const& [c, p] : instances) {
    auto const names = f.name_expressions(c, p);
    INFO(names.front());
    REQUIRE_FALSE(f.violates(c, p));
    CHECK(names.size() == 1);                                // no V transpose launch
    CHECK(names.front().find(", 1>") != std::string::npos);  // kTransposeV = 1, the template's last argument
  }
  compiles_without_spills(instances);
}

TEST_CASE("fa3_sm90 FP8 with bf16 P.V compiles for sm_90a without spills at d 64, 128, 256",
          "[kernels][nvrtc]") {
  Fa3Sm90Family const f;
  std::vector<std::pair<Config, Problem>> instances;
  for (auto [d, causal, dtype] :
       std::vector<std::tuple<int, bool, Precision>>{{64, false, Precision::fp8_e4m3},
                                                     {128, false, Precision::fp8_e4m3},
                                                     {128, true, Precision::fp8_e4m3},
                                                     {256, false, Precision::fp8_e5m2}}) {
    auto p = problem_of(d, causal, dtype);
    p.fp8.bf16_pv = true;
    instances.emplace_back(f.default_config(p), p);
  }
  auto block = problem_of(128, false, Precision::fp8_e4m3);  // FA3's recipe: per block (V not descaled)
  block.fp8.scaling = common::Fp8Scaling::per_block;
  block.fp8.block_rows = 128;
  block.fp8.bf16_pv = true;
  instances.emplace_back(f.default_config(block), block);
  for (auto const& [c, p] : instances) {
    auto const names = f.name_expressions(c, p);
    INFO(names.front());
    CHECK(names.size() == 1);                                // no V transpose launch
    CHECK(names.front().find(", 1>") != std::string::npos);  // kPvBf16 = 1, the template's last argument
  }
  compiles_without_spills(instances);
}

TEST_CASE("every fa3_sm90 mechanism switch compiles without spills", "[kernels][nvrtc]") {
  Fa3Sm90Family const f;
  auto const p = problem_of(128, false, Precision::bf16);
  Config const base = f.default_config(p);
  std::vector<std::pair<Config, Problem>> instances;
  for (auto [name, value] : std::vector<std::pair<char const*, int>>{
           {"kPingPong", 0}, {"kIntraWgOverlap", 0}, {"kPersistent", 0}, {"kPersistent", 2}}) {
    Config c = base;
    c[name] = value;
    c["kBlockN"] = 128;
    REQUIRE_FALSE(f.violates(c, p));
    instances.emplace_back(c, p);
  }
  Config one = base;  // one consumer warpgroup (no register exchange, no ping-pong), three stages
  one["kConsumers"] = 1;
  one["kPingPong"] = 0;
  one["kStages"] = 3;
  one["kBlockN"] = 128;
  REQUIRE_FALSE(f.violates(one, p));
  instances.emplace_back(one, p);
  auto const causal = problem_of(128, true, Precision::bf16);  // the mask the dynamic scheduler is for
  Config dynamic = f.default_config(causal);
  dynamic["kPersistent"] = 2;
  REQUIRE_FALSE(f.violates(dynamic, causal));
  instances.emplace_back(dynamic, causal);
  Config separate = dynamic;  // O in its own tile, Q released before the epilogue
  separate["kSeparateO"] = 1;
  REQUIRE_FALSE(f.violates(separate, causal));
  instances.emplace_back(separate, causal);
  compiles_without_spills(instances);
}

TEST_CASE("the fa3_sm90 configs shipped in db/seed compile without spills", "[kernels][nvrtc]") {
  // The winners fa-tune found on the H200 (db/seed/best_configs.tsv): what a user without a GPU gets.
  std::ifstream seed(std::string(FA_SOURCE_DIR) + "/db/seed/best_configs.tsv");
  REQUIRE(seed);
  std::vector<std::pair<Config, Problem>> instances;
  std::string line;
  while (std::getline(seed, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string field; std::getline(fields, field, '\t');) f.push_back(field);
    // gpu, cc, sm_count, driver, family, dtype, head_dim, causal, direction, ..., config (column 15)
    if (line.empty() || line[0] == '#' || f.size() < 15 || f[4] != "fa3_sm90") continue;
    auto const dtype = common::parse_precision(f[5]);
    auto const config = parse_config(f[14]);
    REQUIRE(dtype);
    REQUIRE(config);
    Problem p = headline_problem(std::stoi(f[12]), std::stoi(f[6]), f[7] == "1", *dtype, Direction::forward);
    INFO(line);
    REQUIRE_FALSE(Fa3Sm90Family{}.violates(*config, p));
    instances.emplace_back(*config, p);
  }
  REQUIRE(instances.size() >= 3);
  // A shipped default may spill as the default does (fa-tune never prunes the default on spills:
  // tuner/compile/prune.hpp, SpillRule): the grid found d256's the fastest at most of its problems.
  std::map<std::string, std::size_t> allowed;
  for (auto const& [config, p] : instances)
    if (p.shape.head_dim == 256 && config == Fa3Sm90Family{}.default_config(p))
      allowed[Fa3Sm90Family{}.name_expressions(config, p).front()] = d256_default_spill_bytes(p.shape.causal);
  compiles_without_spills(instances, allowed);
}

TEST_CASE("a config fa3_sm90's host side rejects is rejected by the kernel too", "[kernels][nvrtc]") {
  Fa3Sm90Family const f;
  auto const p = problem_of(128, false, Precision::bf16);
  auto c = f.default_config(p);
  c["kBlockN"] = 72;  // not a multiple of 16
  REQUIRE(f.violates(c, p));
  auto const program = device::compile_family_config(f, c, p, {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE_FALSE(program);
  CHECK(program.error().log.find("fa3_sm90_config.h") != std::string::npos);
}

TEST_CASE("fa_wgmma_ops*.cuh are what their generator writes", "[kernels]") {
  auto const script = test::kernels_dir() / "tools" / "gen_wgmma_ops.py";
  REQUIRE(std::filesystem::exists(script));
  // --check compares every generated header with the committed one and names each that differs.
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(("python3 " + script.string() + " --check").c_str(), "r"),
                                             pclose);
  REQUIRE(pipe);
  std::string differing;
  std::array<char, 4096> buffer{};
  for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0;)
    differing.append(buffer.data(), n);
  CHECK(differing.empty());
  CHECK(pclose(pipe.release()) == 0);
}

TEST_CASE("fa3_sm90 FP8 with a pre-transposed V compiles for sm_90a without spills", "[kernels][nvrtc]") {
  // --fp8-v-layout transposed --fp8-quantize device, as fa-bench compiles it: the defaults' forwards at every
  // head dim with fp8_quantize_transposed_v (V's codes written as V^T) and no transpose kernel, one program.
  Fa3Sm90Family const f;
  auto problem = [](int d) {
    auto p = problem_of(d, false, Precision::fp8_e4m3);
    p.fp8.pretransposed_v = p.fp8.on_device = true;
    return p;
  };
  auto request = device::make_family_request(f, f.default_config(problem(128)), problem(128),
                                             {TargetArch::sm_90a, test::kernels_dir(), {}});
  REQUIRE(request);
  request->name_expressions.clear();
  for (int d : {64, 128, 256})
    for (auto const& name : f.name_expressions(f.default_config(problem(d)), problem(d))) {
      INFO(name);
      CHECK(name.find("fa3_sm90_transpose_v") == std::string::npos);
      if (std::find(request->name_expressions.begin(), request->name_expressions.end(), name) ==
          request->name_expressions.end())
        request->name_expressions.push_back(name);
    }
  auto const& names = request->name_expressions;
  CHECK(std::count_if(names.begin(), names.end(), [](std::string const& n) {
          return n.rfind("fp8_quantize_transposed_v<", 0) == 0;
        }) == 3);
  auto const program = test::compiles_spill_free(request.value());
  CHECK(program.log.find("serialized") == std::string::npos);
}
