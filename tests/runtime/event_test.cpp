#include "runtime/event.hpp"

#include <catch2/catch.hpp>

#include "runtime/l2_flush.hpp"
#include "tests/runtime/gpu_session.hpp"

TEST_CASE("events time a kernel with a positive duration, after an L2 flush larger than the L2",
          "[event][gpu]") {
  auto gpu = fl::test::load_smoke_on_gpu();
  auto kernel = gpu.module.kernel(gpu.program.lowered_name(fl::test::kSmokeAxpy));
  REQUIRE(kernel.ok());
  int const n = 1 << 24;
  auto const bytes = sizeof(float) * static_cast<std::size_t>(n);
  auto x = fl::runtime::DeviceBuffer::allocate(bytes);
  auto out = fl::runtime::DeviceBuffer::allocate(bytes);
  REQUIRE(x.ok());
  REQUIRE(out.ok());
  REQUIRE(x->fill_words(0x3f800000u).ok());  // 1.0f: never time on zeros

  auto flusher = fl::runtime::L2Flusher::create(gpu.context.info());
  REQUIRE(flusher.ok());
  CHECK(flusher->bytes() >= 2 * gpu.context.info().l2_bytes);
  REQUIRE(flusher->flush().ok());

  auto start = fl::runtime::Event::create();
  auto end = fl::runtime::Event::create();
  REQUIRE(start.ok());
  REQUIRE(end.ok());
  fl::runtime::LaunchConfig config;
  int const per_block = fl::test::kSmokeBlockSize * fl::test::kSmokeItemsPerThread;
  config.grid.x = static_cast<unsigned>(n / per_block);
  config.block.x = fl::test::kSmokeBlockSize;
  REQUIRE(start->record().ok());
  REQUIRE(fl::runtime::launch(kernel.value(), config, 2.0f, x->ptr(), x->ptr(), out->ptr(), n).ok());
  REQUIRE(end->record().ok());
  auto ms = fl::runtime::elapsed_ms(start.value(), end.value());
  REQUIRE(ms.ok());
  CHECK(ms.value() > 0.0f);
  CHECK(ms.value() < 1000.0f);  // 64 MiB of traffic: far below a second on any GPU we target
}
