#include "runtime/device.hpp"

#include <catch2/catch.hpp>

TEST_CASE("query_device answers, or says in one line why there is no GPU", "[device]") {
  auto info = fl::runtime::query_device(0);
  if (info.ok()) {
    CHECK_FALSE(info->name.empty());
  } else {
    auto const& message = info.error().message;
    CHECK((message.starts_with("no CUDA driver: ") || message.starts_with("no CUDA device: ")));
    CHECK(message.find('\n') == std::string::npos);
    CHECK_FALSE(fl::runtime::PrimaryContext::retain(0).ok());
  }
}

TEST_CASE("device properties are plausible", "[device][gpu]") {
  auto info = fl::runtime::query_device(0);
  REQUIRE(info.ok());
  CHECK(info->cc_major >= 8);
  CHECK(info->sm_count > 0);
  CHECK(info->max_shared_per_block == 48 * 1024);
  CHECK(info->max_shared_per_block_optin > info->max_shared_per_block);
  CHECK(info->l2_bytes > 0);
  CHECK(info->memory_bytes > (std::size_t{1} << 30));
  CHECK(info->driver_version >= 12000);
  CHECK(info->identity().find(info->name) == 0);
  CHECK_FALSE(fl::runtime::query_device(info->ordinal + 1000).ok());

  auto context = fl::runtime::PrimaryContext::retain(0);
  REQUIRE(context.ok());
  CHECK(context->get() != nullptr);
  CHECK(context->synchronize().ok());
}
