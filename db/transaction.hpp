#pragma once
// A transaction as an RAII object: begun on construction, rolled back on destruction unless commit()
// was called, so an exception anywhere inside leaves the database as it was.
//
// The outermost transaction on a connection is BEGIN IMMEDIATE by default: it takes the write lock up
// front, so two writers queue on the busy timeout instead of one failing at its first write with
// SQLITE_BUSY (which a deferred transaction cannot wait out). A Transaction opened while another is
// open on the same connection becomes a SAVEPOINT, so a module that writes in a transaction can be
// called from a caller's larger transaction.
#include <cstdint>
#include <string>

namespace fl::db {

class Database;

enum class TransactionMode {
  immediate,  // writes: take the write lock now
  deferred,   // reads: a consistent snapshot, no lock until the first write
};

class Transaction {
 public:
  explicit Transaction(Database& database, TransactionMode mode = TransactionMode::immediate);
  ~Transaction();
  Transaction(Transaction const&) = delete;
  Transaction& operator=(Transaction const&) = delete;
  Transaction(Transaction&&) = delete;
  Transaction& operator=(Transaction&&) = delete;

  void commit();
  bool is_savepoint() const noexcept { return !savepoint_.empty(); }

 private:
  Database& database_;
  std::string savepoint_;  // empty for the outermost transaction
  bool finished_ = false;
};

}  // namespace fl::db
