// The database layer under injected faults, the way SQLite tests itself: a write that fails with an I/O
// error (a VFS shim), a full disk (max_page_count), a lock another connection holds (SQLITE_BUSY), and an
// I/O error at every write, sync and truncate of a sequence of transactions in turn (once, or from then
// on). Each is one DatabaseError line naming the file, without SQL, and leaves no partial transaction
// behind.
#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>

#include "db/integrity.hpp"
#include "db/schema.hpp"
#include "db/tuning_runs.hpp"
#include "db/tuning_store.hpp"
#include "tests/db/temp_dir.hpp"

using namespace fl::db;
using fl::db::test::TempDir;

namespace {

std::int64_t count_runs(Database& database) {
  auto statement = database.prepare("SELECT count(*) FROM tuning_runs");
  statement.step();
  return statement.column_int64(0);
}

void check_one_line_naming(std::exception const& error, std::filesystem::path const& path) {
  std::string const line = error.what();
  CHECK_THAT(line, Catch::Contains(path.string()));
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find("INSERT") == std::string::npos);
}

// A VFS that forwards everything to the default one, except that writes fail while `fail_writes` is set,
// and that the `fail_at`-th write, sync or truncate from now (counting from 1) fails, then every later one
// too when `persistent` (a disk gone), or only that one (a transient error).
class FaultyVfs {
 public:
  static inline std::atomic<bool> fail_writes{false};
  static inline std::atomic<long> fail_at{0};  // 0: no countdown
  static inline std::atomic<bool> persistent{false};
  static inline std::atomic<long> faults{0};  // I/O errors returned by the countdown

  // Whether the current write, sync or truncate fails.
  static bool inject() {
    if (fail_writes) return true;
    if (fail_at <= 0) return false;
    long const left = --fail_at;
    if (left == 0 || (left < 0 && persistent)) {
      ++faults;
      if (!persistent) fail_at = 0;
      return true;
    }
    return false;
  }

  FaultyVfs() {
    base_ = sqlite3_vfs_find(nullptr);
    vfs_ = *base_;
    vfs_.zName = "flashlab-faulty";
    vfs_.szOsFile = int(sizeof(File)) + base_->szOsFile;
    vfs_.xOpen = &FaultyVfs::open;
    vfs_.pAppData = this;
    sqlite3_vfs_register(&vfs_, 1);  // the default while this object lives
  }
  ~FaultyVfs() {
    sqlite3_vfs_unregister(&vfs_);
    sqlite3_vfs_register(base_, 1);
    fail_writes = false;
    fail_at = 0;
  }

 private:
  struct File {
    sqlite3_file header;  // pMethods: ours
    sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
  };
  static File* as(sqlite3_file* f) { return reinterpret_cast<File*>(f); }
  static sqlite3_io_methods const* real_methods(sqlite3_file* f) { return as(f)->real()->pMethods; }

  static int open(sqlite3_vfs* vfs, char const* name, sqlite3_file* file, int flags, int* out_flags) {
    auto* self = static_cast<FaultyVfs*>(vfs->pAppData);
    File* wrapped = as(file);
    std::memset(wrapped, 0, sizeof(File));
    int const rc = self->base_->xOpen(self->base_, name, wrapped->real(), flags, out_flags);
    if (rc != SQLITE_OK || wrapped->real()->pMethods == nullptr) {
      wrapped->header.pMethods = nullptr;
      return rc;
    }
    self->methods_ = *wrapped->real()->pMethods;
    self->methods_.xClose = [](sqlite3_file* f) { return real_methods(f)->xClose(as(f)->real()); };
    self->methods_.xRead = [](sqlite3_file* f, void* p, int n, sqlite3_int64 at) {
      return real_methods(f)->xRead(as(f)->real(), p, n, at);
    };
    self->methods_.xWrite = [](sqlite3_file* f, void const* p, int n, sqlite3_int64 at) {
      if (inject()) return SQLITE_IOERR_WRITE;
      return real_methods(f)->xWrite(as(f)->real(), p, n, at);
    };
    self->methods_.xTruncate = [](sqlite3_file* f, sqlite3_int64 size) {
      if (inject()) return SQLITE_IOERR_TRUNCATE;
      return real_methods(f)->xTruncate(as(f)->real(), size);
    };
    self->methods_.xSync = [](sqlite3_file* f, int sync_flags) {
      if (inject()) return SQLITE_IOERR_FSYNC;
      return real_methods(f)->xSync(as(f)->real(), sync_flags);
    };
    self->methods_.xFileSize = [](sqlite3_file* f, sqlite3_int64* size) {
      return real_methods(f)->xFileSize(as(f)->real(), size);
    };
    self->methods_.xLock = [](sqlite3_file* f, int level) {
      return real_methods(f)->xLock(as(f)->real(), level);
    };
    self->methods_.xUnlock = [](sqlite3_file* f, int level) {
      return real_methods(f)->xUnlock(as(f)->real(), level);
    };
    self->methods_.xCheckReservedLock = [](sqlite3_file* f, int* out) {
      return real_methods(f)->xCheckReservedLock(as(f)->real(), out);
    };
    self->methods_.xFileControl = [](sqlite3_file* f, int op, void* arg) {
      return real_methods(f)->xFileControl(as(f)->real(), op, arg);
    };
    self->methods_.xSectorSize = [](sqlite3_file* f) { return real_methods(f)->xSectorSize(as(f)->real()); };
    self->methods_.xDeviceCharacteristics = [](sqlite3_file* f) {
      return real_methods(f)->xDeviceCharacteristics(as(f)->real());
    };
    self->methods_.xShmMap = [](sqlite3_file* f, int region, int size, int extend, void volatile** out) {
      return real_methods(f)->xShmMap(as(f)->real(), region, size, extend, out);
    };
    self->methods_.xShmLock = [](sqlite3_file* f, int offset, int n, int lock_flags) {
      return real_methods(f)->xShmLock(as(f)->real(), offset, n, lock_flags);
    };
    self->methods_.xShmBarrier = [](sqlite3_file* f) { real_methods(f)->xShmBarrier(as(f)->real()); };
    self->methods_.xShmUnmap = [](sqlite3_file* f, int remove) {
      return real_methods(f)->xShmUnmap(as(f)->real(), remove);
    };
    self->methods_.xFetch = [](sqlite3_file* f, sqlite3_int64 at, int n, void** out) {
      return real_methods(f)->xFetch(as(f)->real(), at, n, out);
    };
    self->methods_.xUnfetch = [](sqlite3_file* f, sqlite3_int64 at, void* p) {
      return real_methods(f)->xUnfetch(as(f)->real(), at, p);
    };
    wrapped->header.pMethods = &self->methods_;
    return SQLITE_OK;
  }

  sqlite3_vfs* base_ = nullptr;
  sqlite3_vfs vfs_{};
  sqlite3_io_methods methods_{};
};

}  // namespace

TEST_CASE("an I/O error on write is one line and loses no committed row", "[db][fault]") {
  TempDir dir;
  auto const path = dir / "io.sqlite";
  {
    FaultyVfs faulty;
    Database database = open_database(path);
    begin_tuning_run(database, "before the fault");
    FaultyVfs::fail_writes = true;
    try {
      begin_tuning_run(database, "during the fault");
      FAIL("a failing write was not reported");
    } catch (DatabaseError const& error) {
      CHECK(error.primary_code() == SQLITE_IOERR);
      check_one_line_naming(error, path);
    }
    FaultyVfs::fail_writes = false;
  }
  Database reopened = open_database(path);
  CHECK(count_runs(reopened) == 1);
}

TEST_CASE("a full disk is one line, and the transaction that hit it leaves nothing", "[db][fault]") {
  TempDir dir;
  auto const path = dir / "full.sqlite";
  Database database = open_database(path);
  auto pages = database.prepare("PRAGMA page_count");
  pages.step();
  database.execute("PRAGMA max_page_count = " + std::to_string(pages.column_int64(0) + 2));
  std::string const long_command(2000, 'x');  // a page per row or so
  std::int64_t stored = 0;
  try {
    for (; stored < 1000; ++stored) begin_tuning_run(database, long_command + std::to_string(stored));
    FAIL("the page limit was never reached");
  } catch (DatabaseError const& error) {
    CHECK(error.primary_code() == SQLITE_FULL);
    check_one_line_naming(error, path);
  }
  CHECK(count_runs(database) == stored);
  CHECK(stored > 0);
}

TEST_CASE("a lock held by another connection is SQLITE_BUSY after the timeout, one line", "[db][fault]") {
  TempDir dir;
  auto const path = dir / "busy.sqlite";
  Database holder = open_database(path);
  Database waiter = open_database(path, DatabaseOptions{.busy_timeout = std::chrono::milliseconds(50)});
  {
    Transaction held(holder);
    begin_tuning_run(holder, "holding the write lock");
    try {
      begin_tuning_run(waiter, "waiting for it");
      FAIL("a second writer got the lock");
    } catch (DatabaseError const& error) {
      CHECK(error.primary_code() == SQLITE_BUSY);
      check_one_line_naming(error, path);
    }
    held.commit();
  }
  begin_tuning_run(waiter, "after the holder committed");
  CHECK(count_runs(waiter) == 2);
}

TEST_CASE("an I/O error at every write, sync and truncate in turn: one line, committed runs whole",
          "[db][fault]") {
  constexpr int kRuns = 3;  // transactions of the scenario, one tuning run each
  long injected = 0;
  int points = 0;
  for (bool const persistent : {false, true}) {
    for (long at = 1;; ++at) {
      INFO((persistent ? "persistent" : "transient") << " fault at I/O call " << at);
      TempDir dir;
      auto const path = dir / "faults.sqlite";
      int committed = 0;
      bool faulted = false;
      {
        FaultyVfs faulty;
        FaultyVfs::persistent = persistent;
        FaultyVfs::faults = 0;
        FaultyVfs::fail_at = at;
        try {
          Database database = open_database(path);
          for (; committed < kRuns; ++committed)
            begin_tuning_run(database, "run " + std::to_string(committed));
        } catch (DatabaseError const& error) {
          check_one_line_naming(error, path);
        } catch (UnusableDatabaseError const& error) {  // the fault hit while the file was opened
          check_one_line_naming(error, path);
        }
        faulted = FaultyVfs::faults > 0;
        injected += FaultyVfs::faults;
      }
      if (!faulted) break;  // the scenario has fewer I/O calls than `at`: every point was tried
      ++points;
      // Reopened without faults: every run reported committed is there, nothing half-written, and the
      // file was not taken for a damaged one (nothing moved aside).
      Database reopened = open_database(path);
      auto check = reopened.prepare("PRAGMA quick_check");
      check.step();
      CHECK(check.column_text(0) == "ok");
      std::int64_t const runs = count_runs(reopened);
      CHECK(runs >= committed);
      CHECK(runs <= committed + 1);  // the transaction in flight when the fault hit: whole or absent
      std::size_t files = 0;
      for (auto const& entry : std::filesystem::directory_iterator(dir.path())) {
        (void)entry;
        ++files;
      }
      CHECK(files <= 3);  // the database, its WAL and shared-memory index: no salvaged copy beside it
    }
  }
  std::cout << "db fault sweep: " << points << " fault points, " << injected << " I/O errors injected\n";
  CHECK(points > 10);
}
