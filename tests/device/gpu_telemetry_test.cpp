#include "device/gpu_telemetry.hpp"

#include <catch2/catch.hpp>

using namespace fl;

TEST_CASE("nvidia-smi's driver release is read as printed, anything else is unknown", "[device][measure]") {
  CHECK(device::parse_driver_release("580.159.04\n") == std::optional<std::string>("580.159.04"));
  CHECK(device::parse_driver_release(" 550.54.15 ") == std::optional<std::string>("550.54.15"));
  CHECK_FALSE(device::parse_driver_release(nullptr));
  CHECK_FALSE(device::parse_driver_release(""));
  CHECK_FALSE(device::parse_driver_release("13000"));  // no dot: not a release (an API version)
  CHECK_FALSE(
      device::parse_driver_release("NVIDIA-SMI has failed because it couldn't communicate with the driver"));
  CHECK_FALSE(device::parse_driver_release("[N/A]"));
}

TEST_CASE("nvidia-smi's clock and temperature line parses, a broken one gives no values",
          "[device][measure]") {
  auto const t = device::parse_gpu_telemetry("1980, 41\n");
  CHECK(t.sm_clock_mhz == std::optional<double>(1980.0));
  CHECK(t.temperature_c == std::optional<double>(41.0));
  CHECK_FALSE(device::parse_gpu_telemetry("[N/A], [N/A]").sm_clock_mhz);
}
