// fa3_sm90 with a pre-transposed V (Problem::fp8.pretransposed_v, fa-bench --fp8-v-layout transposed): the
// launch sequence is the forward alone (after the device quantisation, which writes V^T itself), no V^T
// scratch, V's tensor map is V^T's at params.v; kTransposeV = 1, bf16 P V and fa2_fp8 refuse it.
#include <catch2/catch.hpp>

#include "device/families/families.hpp"
#include "device/families/fp8_quantize_launches.hpp"
#include "device/families/registry.hpp"

using namespace fl::device;
using fl::common::Precision;

namespace {
Problem pretransposed(int d, bool causal, Precision dtype = Precision::fp8_e4m3) {
  auto p = headline_problem(4096, d, causal, dtype, Direction::forward);
  p.shape.seqlen_k = 1000;  // 1024 padded keys
  p.fp8.pretransposed_v = true;
  return p;
}
}  // namespace

TEST_CASE("fa3_sm90 with a pre-transposed V launches the forward alone, reading V as V^T", "[device][fp8]") {
  Fa3Sm90Family const f;
  for (int d : {64, 128, 256}) {
    INFO("d" << d);
    auto const p = pretransposed(d, false);
    auto const c = f.default_config(p);
    REQUIRE_FALSE(f.unsupported(p));
    REQUIRE_FALSE(f.violates(c, p));
    auto rows = p;
    rows.fp8.pretransposed_v = false;
    auto const steps = f.launches(c, p);
    REQUIRE(steps.size() == 1);
    CHECK(steps[0].name_expression == f.launches(c, rows).back().name_expression);  // the same forward
    CHECK(f.name_expressions(c, p).size() == 1);
    CHECK(f.scratch(c, p).v_transposed == 0);
    CHECK(describe(p).find("pretransposed_v") != std::string::npos);
    fa::AttentionParams params{};
    params.v = reinterpret_cast<void*>(0x500000);
    params.v_transposed = reinterpret_cast<void*>(0x600000);
    auto const maps = f.tensor_maps(c, p, params);
    auto const transposed = f.tensor_maps(c, rows, params);  // the launch's V^T in scratch
    REQUIRE(maps.size() == 4);
    CHECK(maps[2].view.base == reinterpret_cast<CUdeviceptr>(params.v));
    CHECK(transposed[2].view.base == reinterpret_cast<CUdeviceptr>(params.v_transposed));
    // Everything else as the transpose launch's V^T: D rows of 1024 positions, boxes of D x a span.
    CHECK(maps[2].view.rows == std::uint64_t(d));
    CHECK(maps[2].view.head_dim == 1024u);
    CHECK(maps[2].view.row_stride == 1024u);
    CHECK(maps[2].view.head_stride == std::uint64_t(d) * 1024u);
    CHECK(maps[2].view.batch_stride == std::uint64_t(p.shape.heads_kv) * d * 1024u);
    CHECK(maps[2].view.row_stride == transposed[2].view.row_stride);
    CHECK(maps[2].view.head_stride == transposed[2].view.head_stride);
    CHECK(maps[2].view.batch_stride == transposed[2].view.batch_stride);
    CHECK(maps[2].box_rows == transposed[2].box_rows);
    CHECK(maps[2].box_columns == transposed[2].box_columns);
  }
}

TEST_CASE("fa3_sm90's device quantisation writes a pre-transposed V itself: no transpose launch",
          "[device][fp8]") {
  Fa3Sm90Family const f;
  auto p = pretransposed(128, true);
  p.fp8.on_device = true;
  auto const c = f.default_config(p);
  REQUIRE_FALSE(f.violates(c, p));
  auto const steps = f.launches(c, p);
  REQUIRE(steps.size() == 4);  // per tensor: amax, scale, codes; then the forward
  CHECK(steps[2].name_expression == "fp8_quantize_transposed_v<__nv_fp8_e4m3, 128, true>");
  for (auto const& s : steps) CHECK(s.name_expression.find("transpose_v") == std::string::npos);
  p.fp8.scaling = fl::common::Fp8Scaling::per_block;
  p.fp8.block_rows = 128;
  CHECK(fp8_quantize_name_expressions(p) ==
        std::vector<std::string>{"fp8_quantize_transposed_v<__nv_fp8_e4m3, 128, false>"});
  p.fp8.pretransposed_v = false;  // the other programs keep their names
  CHECK(fp8_quantize_name_expressions(p) ==
        std::vector<std::string>{"fp8_quantize<__nv_fp8_e4m3, 128, false>"});
}

TEST_CASE("a pre-transposed V is refused where nothing reads V^T as given", "[device][fp8]") {
  Fa3Sm90Family const f;
  auto p = pretransposed(128, false);
  auto c = f.default_config(p);
  c["kBlockN"] = 128;    // room for the staged V tiles (the full mask's default 2 x 256 has none)
  c["kTransposeV"] = 1;  // would transpose it again
  REQUIRE(f.violates(c, p));
  CHECK(f.violates(c, p)->find("kTransposeV") != std::string::npos);
  auto pv = p;
  pv.fp8.bf16_pv = true;
  REQUIRE(f.unsupported(pv));
  CHECK(f.unsupported(pv)->find("--fp8-pv bf16") != std::string::npos);
  Fa2Fp8Family const fa2;
  REQUIRE(fa2.unsupported(p));
  CHECK(fa2.unsupported(p)->find("row-major V") != std::string::npos);
  // The space keeps kTransposeV = 0 only.
  for (auto const& config : enumerate_space(f, p)) CHECK(config.at("kTransposeV") == 0);
}
