#include "runtime/result.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

using fl::runtime::Error;
using fl::runtime::Result;
using fl::runtime::Status;

namespace {
Result<int> parse_positive(int value) {
  if (value <= 0) return Error{"parse", "not positive: " + std::to_string(value), "full log"};
  return value;
}
}  // namespace

TEST_CASE("Result holds a value or an error", "[result]") {
  auto good = parse_positive(4);
  REQUIRE(good.ok());
  CHECK(good.value() == 4);
  CHECK_THROWS_AS(good.error(), std::logic_error);

  auto bad = parse_positive(-1);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().stage == "parse");
  CHECK(bad.error().log == "full log");
  CHECK(bad.error().one_line() == "parse: not positive: -1");
  CHECK_THROWS_AS(bad.value(), std::logic_error);
}

TEST_CASE("Result chains stages and passes the first error through", "[result]") {
  auto doubled = parse_positive(3).and_then([](int v) { return Result<std::string>(std::to_string(2 * v)); });
  REQUIRE(doubled.ok());
  CHECK(doubled.value() == "6");

  bool second_stage_ran = false;
  auto failed = parse_positive(0).and_then([&](int v) {
    second_stage_ran = true;
    return Result<int>(v);
  });
  CHECK_FALSE(second_stage_ran);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message == "not positive: 0");

  auto mapped = parse_positive(5).transform([](int v) { return v + 1; });
  CHECK(mapped.value() == 6);
}

TEST_CASE("Status is success or an error", "[result]") {
  Status fine;
  CHECK(fine.ok());
  Status broken = Error{"launch", "boom", ""};
  CHECK_FALSE(broken.ok());
  auto next = std::move(broken).and_then([] { return Result<int>(1); });
  CHECK(next.error().message == "boom");
}
