#include "runtime/module.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <numeric>
#include <vector>

#include "runtime/device_buffer.hpp"
#include "tests/runtime/gpu_session.hpp"

using fl::runtime::DeviceBuffer;
using fl::runtime::LaunchConfig;
using fl::runtime::LoadedModule;

namespace {

template <class T>
T value_of(fl::runtime::Result<T>&& result) {
  if (!result.ok()) FAIL(result.error().one_line() + "\n" + result.error().log);
  return std::move(result).value();
}

void require_ok(fl::runtime::Status const& status) {
  if (!status.ok()) FAIL(status.error().one_line());
}

}  // namespace

TEST_CASE("a truncated or corrupt CUBIN is a load error, not a crash", "[module]") {
  auto program = fl::runtime::compile(fl::test::smoke_request(fl::runtime::TargetArch::sm_80));
  REQUIRE(program.ok());
  std::vector<char> const& cubin = program->cubin;

  std::vector<char> const truncated(cubin.begin(),
                                    cubin.begin() + static_cast<std::ptrdiff_t>(cubin.size() / 2));
  auto from_truncated = LoadedModule::load(truncated);
  REQUIRE_FALSE(from_truncated.ok());
  CHECK(from_truncated.error().stage == "load");
  CHECK(from_truncated.error().message.starts_with("CUBIN is truncated"));

  std::vector<char> garbage = cubin;
  std::memcpy(garbage.data(), "JUNK", 4);
  auto from_garbage = LoadedModule::load(garbage);
  REQUIRE_FALSE(from_garbage.ok());
  CHECK(from_garbage.error().message == "CUBIN is not an ELF image");

  CHECK_FALSE(LoadedModule::load(std::vector<char>{}).ok());
}

TEST_CASE("the smoke kernel loads, runs and computes alpha * x + y", "[module][gpu]") {
  auto gpu = fl::test::load_smoke_on_gpu();
  auto kernel = value_of(gpu.module.kernel(gpu.program.lowered_name(fl::test::kSmokeAxpy)));

  int const n = 100003;  // not a multiple of the block's elements: exercises the bounds check
  std::vector<float> x(n);
  std::vector<float> y(n);
  std::iota(x.begin(), x.end(), 1.0f);
  for (int i = 0; i < n; ++i) y[static_cast<std::size_t>(i)] = static_cast<float>(i % 7) - 3.0f;
  auto const bytes = sizeof(float) * static_cast<std::size_t>(n);
  auto dx = value_of(DeviceBuffer::allocate(bytes));
  auto dy = value_of(DeviceBuffer::allocate(bytes));
  auto dout = value_of(DeviceBuffer::allocate(bytes));
  require_ok(dx.upload(std::span<float const>(x)));
  require_ok(dy.upload(std::span<float const>(y)));
  require_ok(dout.fill_bytes(0xff));  // NaN everywhere: an element left unwritten cannot pass

  int const per_block = fl::test::kSmokeBlockSize * fl::test::kSmokeItemsPerThread;
  LaunchConfig config;
  config.grid.x = static_cast<unsigned>((n + per_block - 1) / per_block);
  config.block.x = fl::test::kSmokeBlockSize;
  float const alpha = 0.5f;
  require_ok(fl::runtime::launch(kernel, config, alpha, dx.ptr(), dy.ptr(), dout.ptr(), n));
  require_ok(gpu.context.synchronize());

  std::vector<float> out(n);
  require_ok(dout.download(std::span<float>(out)));
  for (int i = 0; i < n; ++i) {
    auto const k = static_cast<std::size_t>(i);
    REQUIRE(out[k] == alpha * x[k] + y[k]);
  }
}

TEST_CASE("dynamic shared memory above 48 KiB is opted into and works", "[module][gpu]") {
  auto gpu = fl::test::load_smoke_on_gpu();
  auto kernel = value_of(gpu.module.kernel(gpu.program.lowered_name(fl::test::kSmokeReverse)));
  std::size_t const shared_bytes = 96 * 1024;  // twice the default limit; every arch we target allows it
  REQUIRE(gpu.context.info().max_shared_per_block_optin >= shared_bytes);
  int const chunk = static_cast<int>(shared_bytes / sizeof(float));
  int const blocks = 8;
  std::vector<float> in(static_cast<std::size_t>(chunk * blocks));
  std::iota(in.begin(), in.end(), 0.0f);
  auto din = value_of(DeviceBuffer::allocate(in.size() * sizeof(float)));
  auto dout = value_of(DeviceBuffer::allocate(in.size() * sizeof(float)));
  require_ok(din.upload(std::span<float const>(in)));

  LaunchConfig config;
  config.grid.x = blocks;
  config.block.x = fl::test::kSmokeBlockSize;
  config.dynamic_shared_bytes = shared_bytes;
  require_ok(fl::runtime::launch(kernel, config, din.ptr(), dout.ptr(), chunk));
  require_ok(gpu.context.synchronize());
  CHECK(value_of(kernel.max_active_blocks_per_sm(fl::test::kSmokeBlockSize, shared_bytes)) >= 1);

  std::vector<float> out(in.size());
  require_ok(dout.download(std::span<float>(out)));
  for (int b = 0; b < blocks; ++b) {
    for (int i = 0; i < chunk; ++i) {
      REQUIRE(out[static_cast<std::size_t>(b * chunk + i)] ==
              in[static_cast<std::size_t>(b * chunk + chunk - 1 - i)]);
    }
  }
}

TEST_CASE("an unknown kernel name is an error naming it", "[module][gpu]") {
  auto gpu = fl::test::load_smoke_on_gpu();
  auto kernel = gpu.module.kernel("no_such_kernel");
  REQUIRE_FALSE(kernel.ok());
  CHECK(kernel.error().message.find("no_such_kernel") != std::string::npos);
}
