#include "db/compile_cache.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

#include "db/schema.hpp"
#include "tests/db/compile_cache_fixture.hpp"
#include "tests/db/temp_dir.hpp"
#include "tests/support/timing_slack.hpp"

using fl::db::CompileCache;
using fl::db::CompileRecord;
using fl::db::test::key_for;
using fl::db::test::make_record;

namespace {

constexpr std::size_t kSmallCubin = 4096;

std::int64_t count(fl::db::Database& db, std::string const& sql) {
  auto statement = db.prepare(sql);
  statement.step();
  return statement.column_int64(0);
}

std::int64_t child_rows(fl::db::Database& db) {
  return count(db, "SELECT count(*) FROM compile_cache_kernels") +
         count(db, "SELECT count(*) FROM compile_cache_names");
}

// Stores a record, damages its row with `damage_sql` (?1 = the key), and expects a miss that deletes it.
void expect_damaged_row_is_a_miss(std::string const& damage_sql, std::string const& expected_reason) {
  auto db = fl::db::open_database(":memory:");
  CompileCache cache(db);
  std::string const key = key_for(7);
  cache.store(key, make_record(kSmallCubin));
  REQUIRE(cache.lookup(key).has_value());
  db.execute("PRAGMA ignore_check_constraints = ON");  // lets the damage bypass the schema's CHECKs
  db.prepare(damage_sql).bind_text(1, key).run();
  REQUIRE(db.changes() == 1);

  auto const result = cache.lookup_with_reason(key);
  CHECK_FALSE(result.record.has_value());
  CHECK_THAT(result.discarded_because, Catch::Contains(expected_reason));
  CHECK(count(db, "SELECT count(*) FROM compile_cache") == 0);
  CHECK(child_rows(db) == 0);
  // The caller recompiles and stores again: a hit.
  cache.store(key, make_record(kSmallCubin));
  CHECK(cache.lookup(key).has_value());
}

}  // namespace

TEST_CASE("compile cache: miss, store, hit returns exactly what was stored", "[db][compile_cache]") {
  auto db = fl::db::open_database(":memory:");
  CompileCache cache(db);
  std::string const key = key_for(1);
  CHECK_FALSE(cache.lookup(key).has_value());
  CHECK(cache.lookup_with_reason(key).discarded_because.empty());

  CompileRecord const stored = make_record(kSmallCubin);
  cache.store(key, stored);
  auto const hit = cache.lookup(key);
  REQUIRE(hit.has_value());
  CHECK_THAT(hit->created_at, Catch::Matches(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"));
  CompileRecord expected = stored;
  expected.created_at = hit->created_at;
  CHECK(*hit == expected);
  CHECK_FALSE(cache.lookup(key_for(2)).has_value());
}

TEST_CASE("compile cache: store replaces a row entirely", "[db][compile_cache]") {
  auto db = fl::db::open_database(":memory:");
  CompileCache cache(db);
  std::string const key = key_for(1);
  cache.store(key, make_record(kSmallCubin, 1));

  CompileRecord replacement = make_record(2 * kSmallCubin, 2);
  replacement.kernel_resources.erase(replacement.kernel_resources.begin());
  replacement.lowered_names.clear();
  replacement.compile_log = "second compile";
  cache.store(key, replacement);

  auto const hit = cache.lookup(key);
  REQUIRE(hit.has_value());
  replacement.created_at = hit->created_at;
  CHECK(*hit == replacement);  // no kernel or name left over from the first store
  CHECK(cache.stats().rows == 1);
}

TEST_CASE("compile cache: invalidate removes the row and its kernels", "[db][compile_cache]") {
  auto db = fl::db::open_database(":memory:");
  CompileCache cache(db);
  cache.store(key_for(1), make_record(kSmallCubin));
  cache.store(key_for(2), make_record(kSmallCubin));
  CHECK(cache.invalidate(key_for(1)));
  CHECK_FALSE(cache.invalidate(key_for(1)));
  CHECK_FALSE(cache.lookup(key_for(1)).has_value());
  CHECK(cache.lookup(key_for(2)).has_value());
  CHECK(child_rows(db) == 4);  // only key 2's two kernels and two names
}

TEST_CASE("compile cache: stats count rows and bytes", "[db][compile_cache]") {
  auto db = fl::db::open_database(":memory:");
  CompileCache cache(db);
  CHECK(cache.stats().rows == 0);
  cache.store(key_for(1), make_record(1000));
  cache.store(key_for(2), make_record(3000));
  auto const stats = cache.stats();
  CHECK(stats.rows == 2);
  CHECK(stats.cubin_bytes == 4000);
  CHECK(stats.log_bytes == 2 * static_cast<std::int64_t>(make_record(1).compile_log.size()));
}

TEST_CASE("compile cache: bad keys and bad records are the caller's error", "[db][compile_cache]") {
  auto db = fl::db::open_database(":memory:");
  CompileCache cache(db);
  CHECK_THROWS_AS(cache.lookup("abc"), std::invalid_argument);
  CHECK_THROWS_AS(cache.lookup(std::string(64, 'A')), std::invalid_argument);  // uppercase is not canonical
  CHECK_THROWS_AS(cache.store(key_for(1), CompileRecord{}), std::invalid_argument);  // empty CUBIN
  CompileRecord negative_time = make_record(16);
  negative_time.compile_ms = -1.0;
  CHECK_THROWS_AS(cache.store(key_for(1), negative_time), std::invalid_argument);
  CHECK(cache.stats().rows == 0);
}

TEST_CASE("compile cache: a store inside a caller's transaction rolls back with it", "[db][compile_cache]") {
  auto db = fl::db::open_database(":memory:");
  CompileCache cache(db);
  {
    fl::db::Transaction caller(db);
    cache.store(key_for(1), make_record(kSmallCubin));
  }
  CHECK_FALSE(cache.lookup(key_for(1)).has_value());
}

TEST_CASE("compile cache: a flipped CUBIN byte is a miss and the row is removed", "[db][compile_cache]") {
  expect_damaged_row_is_a_miss(
      "UPDATE compile_cache SET cubin = CAST(substr(cubin, 1, 99) || X'00' || substr(cubin, 101) AS BLOB) "
      "WHERE cache_key = ?1 AND substr(cubin, 100, 1) <> X'00'",
      "checksum mismatch");
}

TEST_CASE("compile cache: a truncated CUBIN is a miss and the row is removed", "[db][compile_cache]") {
  expect_damaged_row_is_a_miss("UPDATE compile_cache SET cubin = substr(cubin, 1, 1000) WHERE cache_key = ?1",
                               "truncated");
}

TEST_CASE("compile cache: malformed fields are a miss and the row is removed", "[db][compile_cache]") {
  SECTION("negative register count") {
    expect_damaged_row_is_a_miss(
        "UPDATE compile_cache_kernels SET registers = -5 WHERE cache_key = ?1 AND registers = 168",
        "negative resource");
  }
  SECTION("checksum column that does not match") {
    expect_damaged_row_is_a_miss(
        "UPDATE compile_cache SET cubin_sha256 = substr(cubin_sha256, 2) || '0' "
        "WHERE cache_key = ?1",
        "checksum mismatch");
  }
  SECTION("empty creation time") {
    expect_damaged_row_is_a_miss("UPDATE compile_cache SET created_at = '' WHERE cache_key = ?1",
                                 "creation time");
  }
  SECTION("empty lowered name") {
    expect_damaged_row_is_a_miss(
        "UPDATE compile_cache_names SET lowered_name = '' "
        "WHERE cache_key = ?1 AND name_expression = 'fa2_fwd<64, 64>'",
        "empty lowered name");
  }
}

TEST_CASE("compile cache: a hit on a 200 KiB CUBIN takes milliseconds, not a compile's 300+",
          "[db][compile_cache]") {
  // NVRTC compiles of our kernels take 300 ms and more; a hit must stay under 6 ms. The bound asserted
  // is 20 ms so that a loaded 2-core CI machine cannot make it flaky; the typical time is printed.
  constexpr std::size_t kCubinBytes = 200 * 1024;
  constexpr int kLookups = 15;
  constexpr double kBoundMs = 20.0 * fl::test::kTimingSlack;  // x5 under the sanitizers
  fl::db::test::TempDir dir;
  auto db = fl::db::open_database(dir / "timing.sqlite");
  CompileCache cache(db);
  for (std::uint32_t seed = 0; seed < 8; ++seed) cache.store(key_for(seed), make_record(kCubinBytes, seed));

  std::vector<double> hit_ms;
  for (int i = 0; i < kLookups; ++i) {
    auto const start = std::chrono::steady_clock::now();
    auto const hit = cache.lookup(key_for(static_cast<std::uint32_t>(i % 8)));
    auto const stop = std::chrono::steady_clock::now();
    REQUIRE(hit.has_value());
    REQUIRE(hit->cubin.size() == kCubinBytes);
    hit_ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(hit_ms.begin(), hit_ms.end());
  double const median_ms = hit_ms[hit_ms.size() / 2];
  WARN("compile cache hit, 200 KiB CUBIN: median " << median_ms << " ms, min " << hit_ms.front() << " ms");
  CHECK(median_ms < kBoundMs);
}
