#include "device/config.hpp"

#include <catch2/catch.hpp>

using namespace fl::device;

TEST_CASE("config text is canonical: sorted by name, comma-separated", "[device]") {
  Config const c{{"kBlockN", 64}, {"kBlockM", 128}, {"kStages", 2}};
  CHECK(to_string(c) == "kBlockM=128,kBlockN=64,kStages=2");
  auto const back = parse_config(" kStages=2 , kBlockM=128,kBlockN=64");
  REQUIRE(back);
  CHECK(*back == c);
}

TEST_CASE("malformed config text is refused", "[device]") {
  CHECK_FALSE(parse_config("kBlockM"));
  CHECK_FALSE(parse_config("kBlockM=12x"));
  CHECK_FALSE(parse_config("=4"));
  CHECK_FALSE(parse_config("kBlockM=1,kBlockM=2"));
  CHECK(parse_config("")->empty());
}
