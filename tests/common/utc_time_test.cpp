#include "common/utc_time.hpp"

#include <catch2/catch.hpp>

using fl::common::iso_utc;

TEST_CASE("iso_utc writes UTC with the fraction digits asked, truncated", "[common]") {
  // 2026-12-07T21:40:01Z plus 123456789 ns.
  std::chrono::system_clock::time_point const t{
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(1'796'679'601'123'456'789LL))};
  CHECK(iso_utc(t, 3) == "2026-12-07T21:40:01.123Z");
  CHECK(iso_utc(t, 6) == "2026-12-07T21:40:01.123456Z");
  CHECK(iso_utc(t, 0) == "2026-12-07T21:40:01Z");
  std::chrono::system_clock::time_point const early{std::chrono::milliseconds(5)};
  CHECK(iso_utc(early, 3) == "1970-01-01T00:00:00.005Z");
}
