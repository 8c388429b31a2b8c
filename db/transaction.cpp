#include "db/transaction.hpp"

#include <atomic>

#include "db/database.hpp"

namespace fl::db {
namespace {

std::string next_savepoint_name() {
  static std::atomic<std::uint64_t> counter{0};
  return "fl_savepoint_" + std::to_string(counter.fetch_add(1));
}

}  // namespace

Transaction::Transaction(Database& database, TransactionMode mode) : database_(database) {
  if (database_.in_transaction()) {
    savepoint_ = next_savepoint_name();
    database_.execute("SAVEPOINT " + savepoint_);
  } else {
    database_.execute(mode == TransactionMode::immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
  }
}

Transaction::~Transaction() {
  if (finished_) return;
  // Never throw from a destructor. A rollback can only fail when SQLite already rolled the
  // transaction back itself (after SQLITE_FULL, SQLITE_IOERR, ...), which leaves the state we want.
  try {
    if (is_savepoint()) {
      database_.execute("ROLLBACK TO " + savepoint_ + "; RELEASE " + savepoint_);
    } else if (database_.in_transaction()) {
      database_.execute("ROLLBACK");
    }
  } catch (...) {
  }
}

void Transaction::commit() {
  database_.execute(is_savepoint() ? "RELEASE " + savepoint_ : std::string("COMMIT"));
  finished_ = true;
}

}  // namespace fl::db
