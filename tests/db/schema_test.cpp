#include "db/schema.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "db/compile_cache.hpp"
#include "tests/db/temp_dir.hpp"

using fl::db::current_schema_version;
using fl::db::Database;
using fl::db::migrate;
using fl::db::schema_dump;
using fl::db::schema_version;
using fl::db::test::TempDir;

namespace {

std::filesystem::path golden_path(int version) {
  return std::filesystem::path(FA_TEST_DATA_DIR) / ("schema_v" + std::to_string(version) + ".sql");
}

std::string read_file(std::filesystem::path const& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::int64_t count(Database& db, std::string const& table) {
  auto statement = db.prepare("SELECT count(*) FROM " + table);
  statement.step();
  return statement.column_int64(0);
}

}  // namespace

TEST_CASE("migrations are numbered 1, 2, ... without gaps", "[db][schema]") {
  auto const all = fl::db::migrations();
  REQUIRE_FALSE(all.empty());
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(all[i].version == static_cast<int>(i) + 1);
  CHECK(current_schema_version() == all.back().version);
}

// The golden test: each version's schema is pinned by tests/db/data/schema_v<N>.sql. Changing a
// migration (or the schema) without adding a new version and its golden file fails here.
TEST_CASE("the schema of every version equals its golden file", "[db][schema]") {
  for (int version = 1; version <= current_schema_version(); ++version) {
    INFO("schema version " << version);
    Database db(":memory:");
    migrate(db, version);
    std::string const live = schema_dump(db);
    auto const golden = golden_path(version);
    if (!std::filesystem::exists(golden) || read_file(golden) != live) {
      // Leave the live dump beside the build so a deliberate change is one `cp` away.
      auto const written = std::filesystem::current_path() / golden.filename();
      std::ofstream(written) << live;
      FAIL_CHECK("live schema differs from " << golden.string()
                                             << " (or it is missing). A schema change needs a new "
                                                "migration and version; the live dump is in "
                                             << written.string());
    }
  }
  CHECK_FALSE(std::filesystem::exists(golden_path(current_schema_version() + 1)));
}

TEST_CASE("a fresh database is created at the current version", "[db][schema]") {
  TempDir dir;
  auto db = fl::db::open_database(dir / "fresh.sqlite");
  CHECK(schema_version(db) == current_schema_version());
  for (std::string table : {"compile_cache", "measurements", "best_configs", "mutation_results"}) {
    CHECK(count(db, table) == 0);
  }
}

TEST_CASE("migrating step by step from v0 equals creating fresh, and keeps the data", "[db][schema]") {
  TempDir dir;
  auto const stepped_path = dir / "stepped.sqlite";
  std::string const key(64, 'a');
  for (int version = 0; version <= current_schema_version(); ++version) {
    Database db(stepped_path);  // a new connection each step, as a new FlashLab release would open it
    migrate(db, version);
    CHECK(schema_version(db) == version);
    if (version == 1) {
      fl::db::CompileRecord record;
      record.cubin = {'\x7f', 'E', 'L', 'F'};
      fl::db::CompileCache(db).store(key, record);
    }
  }
  Database stepped(stepped_path);
  Database fresh(dir / "fresh.sqlite");
  migrate(fresh);
  CHECK(schema_dump(stepped) == schema_dump(fresh));
  CHECK(fl::db::CompileCache(stepped).lookup(key).has_value());
}

TEST_CASE("opening an older database migrates it to the current version", "[db][schema]") {
  TempDir dir;
  auto const path = dir / "old.sqlite";
  {
    Database db(path);
    migrate(db, 1);
  }
  auto db = fl::db::open_database(path);
  CHECK(schema_version(db) == current_schema_version());
}

TEST_CASE("a database newer than the code is refused and left untouched", "[db][schema]") {
  TempDir dir;
  auto const path = dir / "newer.sqlite";
  int const newer = current_schema_version() + 1;
  {
    Database db(path);
    migrate(db);
    db.execute("PRAGMA user_version = " + std::to_string(newer));
  }
  try {
    fl::db::open_database(path);
    FAIL("opened a database from the future");
  } catch (fl::db::SchemaTooNewError const& error) {
    CHECK(error.found_version() == newer);
    CHECK(error.known_version() == current_schema_version());
    CHECK_THAT(error.what(), Catch::Contains(path.string()) && Catch::Contains(std::to_string(newer)));
  }
  Database db(path);
  CHECK(schema_version(db) == newer);
  CHECK_THROWS_AS(migrate(db, newer), std::invalid_argument);
}

TEST_CASE("a failing migration leaves the database at the previous version", "[db][schema]") {
  // Simulate a conflicting object so migration 1 fails half-way: its transaction must undo it all.
  Database db(":memory:");
  db.execute("CREATE TABLE compile_cache_names (x INTEGER)");
  CHECK_THROWS_AS(migrate(db), fl::db::DatabaseError);
  CHECK(schema_version(db) == 0);
  auto tables = db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'compile_cache'");
  tables.step();
  CHECK(tables.column_int64(0) == 0);
}

TEST_CASE("schema_dump sees schema changes but not layout or comments", "[db][schema]") {
  Database spaced(":memory:");
  spaced.execute("CREATE TABLE t (\n  a INTEGER,  -- the first column\n  b TEXT DEFAULT 'x  -- y'\n)");
  Database compact(":memory:");
  compact.execute("CREATE TABLE t (a INTEGER, b TEXT DEFAULT 'x  -- y')");
  CHECK(schema_dump(spaced) == schema_dump(compact));

  std::string const before = schema_dump(compact);
  compact.execute("CREATE INDEX t_by_b ON t (b)");
  CHECK(schema_dump(compact) != before);
  Database other_default(":memory:");
  other_default.execute(
      "CREATE TABLE t (a INTEGER, b TEXT DEFAULT 'x -- y')");  // one space fewer, in a string
  CHECK(schema_dump(other_default) != schema_dump(spaced));
}

// Version 5 adds tuning runs and re-measurements, and a column to measurements and gpus: a database tuned
// before it keeps every measurement and best config (run_id and cuda_driver_api NULL), and can record runs.
TEST_CASE("migrating a tuned v4 database to v5 keeps its measurements and best configs", "[db][schema]") {
  TempDir dir;
  auto const path = dir / "v4.sqlite";
  {
    Database db(path);
    migrate(db, 4);
    db.execute(
        "INSERT INTO gpus (name, cc_major, cc_minor, sm_count, driver_version) VALUES ('NVIDIA H200', 9, 0, "
        "132, "
        "'13000');"
        "INSERT INTO problems (batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim, dtype, causal, "
        "direction) "
        "VALUES (4, 16, 16, 4096, 4096, 128, 'bf16', 0, 'fwd');"
        "INSERT INTO measurements (gpu_id, nvrtc_version, source_hash, family, config, problem_id, verdict, "
        "median_ms, p20_ms, p80_ms, runs, tflops, measured_at) VALUES (1, '13.0', '" +
        std::string(64, 'a') +
        "', 'fa2_sm80', 'kBlockM=128', 1, 'ok', 1.79, 1.78, 1.80, 30, 307.0, '2026-11-29T17:18:36.050Z');"
        "INSERT INTO best_configs (gpu_id, problem_id, family, config, median_ms, tflops, source, "
        "nvrtc_version, "
        "recorded_at) VALUES (1, 1, 'fa2_sm80', 'kBlockM=128', 1.79, 307.0, 'seed', '13.0', "
        "'2026-11-29T17:18:36.050Z');");
  }
  Database db(path);
  migrate(db, 5);
  CHECK(schema_version(db) == 5);
  CHECK(count(db, "measurements") == 1);
  CHECK(count(db, "best_configs") == 1);
  auto row = db.prepare("SELECT median_ms, run_id FROM measurements");
  REQUIRE(row.step());
  CHECK(row.column_double(0) == Approx(1.79));
  CHECK_FALSE(row.column_optional_int64(1).has_value());
  auto gpu = db.prepare("SELECT driver_version, cuda_driver_api FROM gpus");
  REQUIRE(gpu.step());
  CHECK(gpu.column_text(0) == "13000");
  CHECK_FALSE(gpu.column_optional_int64(1).has_value());
  // The new tables work on the old rows: a run re-measures the old measurement.
  db.execute(
      "INSERT INTO tuning_runs (started_at, command) VALUES ('2026-11-30T00:00:00.000Z', 'fa-tune');"
      "INSERT INTO tuning_runs (started_at, command, repeat_of, repeat_index) VALUES "
      "('2026-11-30T00:00:01.000Z', 'fa-tune', 1, 2);"
      "INSERT INTO remeasurements (run_id, measurement_id, verdict, median_ms, p20_ms, p80_ms, runs, tflops, "
      "measured_at) VALUES (2, 1, 'ok', 1.80, 1.79, 1.81, 30, 305.0, '2026-11-30T00:00:02.000Z');");
  CHECK(count(db, "remeasurements") == 1);
  CHECK_THROWS_AS(
      db.execute("INSERT INTO tuning_runs (started_at, command, repeat_index) VALUES ('x', 'y', 2)"),
      fl::db::DatabaseError);  // a repeat names its series
}

// Every table of the current schema has a writer in db/: numerics_runs (version 3) had none and is dropped by
// version 7, on a database that has rows elsewhere as well.
TEST_CASE("version 7 drops numerics_runs and keeps the mutation runs", "[db][schema]") {
  Database db(":memory:");
  migrate(db, 6);
  db.execute(
      "INSERT INTO mutation_runs (started_at, command, target, family, dtype, mutation_score, passed) VALUES "
      "('2026-12-01T00:00:00.000Z', 'fa-mutate', 'cpu', 'fa2', 'bf16', 100.0, 1);");
  migrate(db, 7);
  CHECK(count(db, "mutation_runs") == 1);
  auto table =
      db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'numerics_runs'");
  REQUIRE(table.step());
  CHECK(table.column_int64(0) == 0);
}

// Version 8: a measured best config takes back the time of its measurement, which a resumed run had
// overwritten with its own; a seed row, and a measured row whose measurement is gone, keep theirs.
TEST_CASE("version 8 gives measured best configs the time of their measurement", "[db][schema]") {
  Database db(":memory:");
  migrate(db, 7);
  db.execute(
      "INSERT INTO gpus (name, cc_major, cc_minor, sm_count, driver_version) VALUES ('NVIDIA H200', 9, 0, "
      "132, '580.159.04');"
      "INSERT INTO problems (batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim, dtype, causal, "
      "direction) VALUES (4, 16, 16, 4096, 4096, 128, 'bf16', 0, 'fwd'), (2, 16, 16, 8192, 8192, 128, "
      "'bf16', 0, 'fwd'), (1, 16, 16, 16384, 16384, 128, 'bf16', 0, 'fwd');");
  // ?1 is the kernel source's hash. Problem 1's best was measured on 12-04 and chosen again by a resume
  // on 12-07; a slower config measured later must not lend its time.
  auto const insert_with_hash = [&db](char const* sql) {
    db.prepare(sql).bind_text(1, std::string(64, 'a')).run();
  };
  insert_with_hash(
      "INSERT INTO measurements (gpu_id, nvrtc_version, source_hash, family, config, problem_id, verdict, "
      "median_ms, p20_ms, p80_ms, runs, tflops, measured_at) VALUES "
      "(1, '13.0', ?1, 'fa2_sm80', 'kBlockM=128', 1, 'ok', "
      "1.79, 1.78, 1.80, 30, 307.0, '2026-12-04T10:00:00.000Z'),"
      "(1, '13.0', ?1, 'fa2_sm80', 'kBlockM=64', 1, 'ok', "
      "1.95, 1.94, 1.96, 30, 282.0, '2026-12-07T13:00:00.000Z');");
  insert_with_hash(
      "INSERT INTO best_configs (gpu_id, problem_id, family, config, median_ms, tflops, source, "
      "nvrtc_version, source_hash, recorded_at) VALUES "
      "(1, 1, 'fa2_sm80', 'kBlockM=128', 1.79, 307.0, 'measured', '13.0', "
      "?1, '2026-12-07T13:05:00.000Z'),"
      "(1, 2, 'fa2_sm80', 'kBlockM=128', 7.1, 310.0, 'seed', '13.0', NULL, '2026-12-01T09:00:00.000Z'),"
      "(1, 3, 'fa2_sm80', 'kBlockM=128', 28.0, 314.0, 'measured', '13.0', "
      "?1, '2026-12-05T08:00:00.000Z');");
  migrate(db, 8);
  auto rows = db.prepare("SELECT problem_id, recorded_at FROM best_configs ORDER BY problem_id");
  std::vector<std::string> times;
  while (rows.step()) times.push_back(rows.column_text(1));
  CHECK(times == std::vector<std::string>{"2026-12-04T10:00:00.000Z", "2026-12-01T09:00:00.000Z",
                                          "2026-12-05T08:00:00.000Z"});
}

// Version 9: each measurement says how it was timed. Every timed row before it was fa-tune's (5 warm-up
// runs, no settle); a row that was not timed (wrong, pruned, failed) has no protocol.
TEST_CASE("version 9 gives every timed row fa-tune's protocol and leaves untimed rows without one",
          "[db][schema]") {
  Database db(":memory:");
  migrate(db, 8);
  db.execute(
      "INSERT INTO gpus (name, cc_major, cc_minor, sm_count, driver_version) VALUES ('NVIDIA H200', 9, 0, "
      "132, '580.159.04');"
      "INSERT INTO problems (batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim, dtype, causal, "
      "direction) VALUES (4, 16, 16, 4096, 4096, 128, 'bf16', 0, 'fwd');"
      "INSERT INTO tuning_runs (started_at, command) VALUES ('2026-12-04T10:00:00.000Z', 'fa-tune');");
  db.prepare(
        "INSERT INTO measurements (gpu_id, nvrtc_version, source_hash, family, config, problem_id, verdict, "
        "median_ms, p20_ms, p80_ms, runs, tflops, measured_at) VALUES "
        "(1, '13.0', ?1, 'fa2_sm80', 'kBlockM=128', 1, 'ok', 1.79, 1.78, 1.80, 30, 307.0, '2026-12-04'),"
        "(1, '13.0', ?1, 'fa2_sm80', 'kBlockM=64', 1, 'wrong', NULL, NULL, NULL, NULL, NULL, '2026-12-04');")
      .bind_text(1, std::string(64, 'a'))
      .run();
  db.execute(
      "INSERT INTO remeasurements (run_id, measurement_id, verdict, median_ms, p20_ms, p80_ms, runs, tflops, "
      "measured_at) VALUES (1, 1, 'ok', 1.81, 1.80, 1.82, 30, 304.0, '2026-12-04'),"
      "(1, 2, 'wrong', NULL, NULL, NULL, NULL, NULL, '2026-12-04');");
  migrate(db, 9);
  for (char const* table : {"measurements", "remeasurements"}) {
    auto rows = db.prepare(std::string("SELECT measurement_id, warmup_runs, settle_ms FROM ") + table +
                           " ORDER BY measurement_id");
    REQUIRE(rows.step());
    CHECK(rows.column_optional_int64(1) == 5);
    CHECK(rows.column_optional_int64(2) == 0);
    REQUIRE(rows.step());
    CHECK_FALSE(rows.column_optional_int64(1));
    CHECK_FALSE(rows.column_optional_int64(2));
    CHECK_FALSE(rows.step());
  }
}
