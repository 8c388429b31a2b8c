// Crash safety: a writer process killed with SIGKILL in the middle of its transactions. Reopened, the
// database must hold every transaction that committed, complete, and nothing of the one in flight
// (WAL recovery ignores frames without a commit record).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <set>
#include <vector>

#include "db/compile_cache.hpp"
#include "db/schema.hpp"
#include "tests/db/compile_cache_fixture.hpp"
#include "tests/db/temp_dir.hpp"

using fl::db::test::key_for;
using fl::db::test::make_record;

namespace {

constexpr int kRecordsPerTransaction = 3;
constexpr std::size_t kCubinBytes = 256 * 1024;  // a store takes ~1 ms, so a kill lands mid-store
constexpr std::uint32_t kInFlightMarker = 0xffffffffu;
constexpr int kChildFailed = 3;

std::uint32_t seed_of(std::uint32_t transaction, int record) {
  return transaction * kRecordsPerTransaction + static_cast<std::uint32_t>(record);
}

void report(int fd, std::uint32_t value) {
  if (write(fd, &value, sizeof value) != static_cast<ssize_t>(sizeof value)) _exit(kChildFailed);
}

// The child: commits transactions of kRecordsPerTransaction records, reporting each index after its
// commit. With `stop_in_flight_after` set, it then opens one more transaction, writes a record far
// larger than the page cache (so uncommitted pages spill into the WAL file), reports the marker and
// waits to be killed.
[[noreturn]] void run_writer(std::filesystem::path const& path, int fd, std::uint32_t stop_in_flight_after) {
  try {
    auto db = fl::db::open_database(path);
    fl::db::CompileCache cache(db);
    for (std::uint32_t transaction = 0;; ++transaction) {
      if (transaction == stop_in_flight_after) {
        constexpr std::size_t kSpillBytes = 8 * 1024 * 1024;  // > SQLite's default 2 MiB page cache
        fl::db::Transaction in_flight(db);
        cache.store(key_for(seed_of(transaction, 0)), make_record(kSpillBytes, seed_of(transaction, 0)));
        report(fd, kInFlightMarker);
        for (;;) pause();
      }
      fl::db::Transaction committed(db);
      for (int record = 0; record < kRecordsPerTransaction; ++record) {
        std::uint32_t const seed = seed_of(transaction, record);
        cache.store(key_for(seed), make_record(kCubinBytes, seed));
      }
      committed.commit();
      report(fd, transaction);
    }
  } catch (...) {
    _exit(kChildFailed);
  }
}

// Kills the child if the test leaves early.
struct ChildGuard {
  pid_t pid;
  ~ChildGuard() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

struct KilledRun {
  std::vector<std::uint32_t> reported;  // transactions the child reported committed
  bool saw_in_flight_marker = false;
};

// Forks the writer, reads its reports until `kill_after_reports` of them (or the marker), kills it
// with SIGKILL, then collects the reports still in the pipe.
KilledRun run_and_kill(std::filesystem::path const& path, std::size_t kill_after_reports,
                       std::uint32_t stop_in_flight_after) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t const pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    run_writer(path, fds[1], stop_in_flight_after);
  }
  close(fds[1]);
  ChildGuard guard{pid};
  KilledRun run;
  auto read_one = [&](std::uint32_t& value) { return read(fds[0], &value, sizeof value) == sizeof value; };
  std::uint32_t value = 0;
  while (run.reported.size() < kill_after_reports && read_one(value)) {
    if (value == kInFlightMarker) {
      run.saw_in_flight_marker = true;
      break;
    }
    run.reported.push_back(value);
  }
  REQUIRE(kill(pid, SIGKILL) == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  guard.pid = 0;
  INFO("the writer must die by SIGKILL, not exit on its own (exit status " << status << ")");
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(WTERMSIG(status) == SIGKILL);
  while (read_one(value)) {
    if (value != kInFlightMarker) run.reported.push_back(value);
  }
  close(fds[0]);
  return run;
}

std::set<std::string> stored_keys(fl::db::Database& db) {
  std::set<std::string> keys;
  auto select = db.prepare("SELECT cache_key FROM compile_cache");
  while (select.step()) keys.insert(select.column_text(0));
  return keys;
}

// Every reported transaction is there and intact; every transaction is all or nothing.
void check_committed_intact(std::filesystem::path const& path, std::vector<std::uint32_t> const& reported,
                            std::size_t record_bytes) {
  auto db = fl::db::open_database(path);
  fl::db::CompileCache cache(db);
  auto const keys = stored_keys(db);
  for (std::uint32_t transaction : reported) {
    for (int record = 0; record < kRecordsPerTransaction; ++record) {
      std::uint32_t const seed = seed_of(transaction, record);
      auto const hit = cache.lookup_with_reason(key_for(seed));
      INFO("transaction " << transaction << " record " << record << ": " << hit.discarded_because);
      REQUIRE(hit.record.has_value());
      auto expected = make_record(record_bytes, seed);
      expected.created_at = hit.record->created_at;
      CHECK(*hit.record == expected);
    }
  }
  // At most one transaction can have committed between its last report and the kill; it must be whole.
  CHECK(keys.size() % kRecordsPerTransaction == 0);
  CHECK(keys.size() / kRecordsPerTransaction - reported.size() <= 1);
  for (auto const& key : keys) CHECK(cache.lookup(key).has_value());
}

}  // namespace

TEST_CASE("kill -9 during a series of transactions: committed rows intact, no partial row", "[db][crash]") {
  constexpr std::size_t kKillAfter = 20;
  fl::db::test::TempDir dir;
  auto const path = dir / "crash.sqlite";
  fl::db::open_database(path);  // create the schema before forking: the child only writes rows
  auto const run = run_and_kill(path, kKillAfter, /*stop_in_flight_after=*/UINT32_MAX);
  REQUIRE(run.reported.size() >= kKillAfter);
  check_committed_intact(path, run.reported, kCubinBytes);
}

TEST_CASE("kill -9 with uncommitted pages already in the WAL: they are discarded", "[db][crash]") {
  constexpr std::uint32_t kCommitted = 4;
  fl::db::test::TempDir dir;
  auto const path = dir / "crash.sqlite";
  fl::db::open_database(path);
  auto const run = run_and_kill(path, SIZE_MAX, kCommitted);
  REQUIRE(run.saw_in_flight_marker);
  REQUIRE(run.reported.size() == kCommitted);
  // The WAL file holds the in-flight transaction's spilled pages, uncommitted, when the process dies.
  auto wal = path;
  wal += "-wal";
  CHECK(std::filesystem::file_size(wal) > 8u * 1024 * 1024);
  check_committed_intact(path, run.reported, kCubinBytes);
  auto db = fl::db::open_database(path);
  CHECK_FALSE(fl::db::CompileCache(db).lookup(key_for(seed_of(kCommitted, 0))).has_value());
  CHECK(stored_keys(db).size() == kCommitted * kRecordsPerTransaction);
}
