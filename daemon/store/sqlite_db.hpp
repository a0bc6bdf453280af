// A thin RAII layer over the SQLite C API for the store: a connection (SqliteDb), its prepared
// statements (Statement, cached per connection and handed out as StatementRef), a transaction
// guard, and the one mapping from SQLite result codes to common::ErrorCode. Every statement step
// asks the store's fault seam first when one is installed (store_faults.hpp): the one place below
// every class of the store where a test makes SQLite fail.
//
// Thread safety: none inside. A SqliteDb and everything obtained from it belong to one thread at a
// time; the store hands whole connections to threads (a reader pool, a mutex-guarded writer).
// Connections are opened without SQLite's own per-connection mutex for that reason.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <common/result.hpp>
#include <proto/digest.hpp>

#include <daemon/store/image_buffer.hpp>

struct sqlite3;
struct sqlite3_stmt;

namespace jitcache::daemon::store {

class StoreFaults;

using common::Error;
using common::Result;

// SQLITE_FULL → no_space, SQLITE_CORRUPT/SQLITE_NOTADB → corrupt, SQLITE_BUSY/SQLITE_LOCKED →
// unavailable, SQLITE_TOOBIG → too_large, SQLITE_IOERR/SQLITE_CANTOPEN/SQLITE_READONLY/SQLITE_PERM →
// io, anything else → internal. Takes primary or extended codes.
common::ErrorCode map_sqlite_code(int rc);

// "<what>: <SQLite's message> (SQLite code <n>)", e.g. "storing entry 3fa2…: database or disk is
// full (SQLite code 13)". `db` may be null when no connection exists yet.
Error sqlite_error(sqlite3* db, int rc, std::string_view what);

class Statement {
 public:
  // `faults`: asked before every step (store_faults.hpp); null in the daemon.
  Statement(sqlite3_stmt* stmt, StoreFaults* faults) : m_stmt(stmt), m_faults(faults) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based as in SQLite. Text and blobs are bound without a copy: the bytes must
  // stay valid until the statement is reset. A bind failure (e.g. SQLITE_TOOBIG) is remembered and
  // reported by the next step(), so call sites need not check every bind.
  void bind(int index, std::int64_t value);
  // Named apart from bind(), which integers of every width reach without a cast.
  void bind_double(int index, double value);
  void bind_text(int index, std::string_view text);
  void bind_blob(int index, proto::Bytes bytes);
  void bind_null(int index);

  // true: a row is available; false: done. `what` names the operation for the error message.
  Result<bool> step(std::string_view what);
  // Steps to completion, ignoring rows (DDL, INSERT, UPDATE, DELETE).
  Result<void> run(std::string_view what);

  std::int64_t column_int64(int index) const;
  double column_double(int index) const;
  std::string column_text(int index) const;
  // Valid until the next step or reset.
  proto::Bytes column_blob(int index) const;
  bool column_is_null(int index) const;

  // Ends the statement's read of the database and clears its bindings.
  void reset();

 private:
  sqlite3_stmt* m_stmt;
  StoreFaults* m_faults;
  int m_bind_rc = 0;
};

// A cached statement borrowed for one use; resets it when the borrow ends, so no statement keeps a
// read snapshot open (which would hold back WAL checkpoints) after its caller is done.
class StatementRef {
 public:
  explicit StatementRef(Statement* stmt) : m_stmt(stmt) {}
  ~StatementRef() {
    if (m_stmt) m_stmt->reset();
  }
  StatementRef(StatementRef&& other) noexcept : m_stmt(other.m_stmt) { other.m_stmt = nullptr; }
  StatementRef(const StatementRef&) = delete;
  StatementRef& operator=(const StatementRef&) = delete;
  StatementRef& operator=(StatementRef&&) = delete;

  Statement* operator->() const { return m_stmt; }
  Statement& operator*() const { return *m_stmt; }

 private:
  Statement* m_stmt;
};

enum class OpenMode {
  read_write_create,  // the writer: creates the file when it is missing
  read_write,         // readers: the writer has created the file already
};

class SqliteDb {
 public:
  // `faults`: the store's fault seam, asked before every statement step on this connection
  // (store_faults.hpp); null in the daemon.
  static Result<SqliteDb> open(const std::filesystem::path& path, OpenMode mode, StoreFaults* faults = nullptr);

  SqliteDb(SqliteDb&& other) noexcept;
  SqliteDb& operator=(SqliteDb&& other) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb();

  sqlite3* handle() const { return m_db; }
  const std::filesystem::path& path() const { return m_path; }
  // What open() was given: a connection opened beside this one (an export's) passes it on.
  StoreFaults* faults() const { return m_faults; }

  // Runs one or more statements with no parameters (migrations, PRAGMAs, BEGIN/COMMIT).
  Result<void> exec(std::string_view sql, std::string_view what);

  // A statement prepared once per connection (keyed by its text) and kept for its lifetime.
  Result<StatementRef> statement(std::string_view sql);

  // The single-column, single-row result of `sql`, e.g. a PRAGMA read.
  Result<std::string> query_text(std::string_view sql, std::string_view what);

  // Reads a whole BLOB cell with one sqlite3_blob_read straight into a buffer of its size that is
  // not zero-filled first (image_buffer.hpp): one copy out of SQLite, no intermediate. nullopt
  // when the row does not exist. Must run inside a transaction that also read the row's metadata,
  // so both come from one snapshot.
  Result<std::optional<ImageBuffer>> read_blob(const char* table, const char* column, std::int64_t rowid,
                                               std::string_view what);

  std::int64_t changes() const;
  std::int64_t last_insert_rowid() const;
  bool in_transaction() const;

 private:
  SqliteDb(sqlite3* db, std::filesystem::path path, StoreFaults* faults);
  void close();

  sqlite3* m_db = nullptr;
  std::filesystem::path m_path;
  StoreFaults* m_faults = nullptr;
  struct SqlHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view sql) const { return std::hash<std::string_view>{}(sql); }
  };
  // Transparent lookup: finding a cached statement does not copy its text.
  std::unordered_map<std::string, std::unique_ptr<Statement>, SqlHash, std::equal_to<>> m_statements;
};

enum class TransactionKind {
  deferred,   // readers: takes a WAL snapshot at the first read
  immediate,  // the writer: takes the write lock at BEGIN, so it never fails half-way with BUSY
};

// BEGIN on construction (via begin()), ROLLBACK on destruction unless commit() succeeded.
class Transaction {
 public:
  static Result<Transaction> begin(SqliteDb& db, TransactionKind kind, std::string_view what);

  Transaction(Transaction&& other) noexcept : m_db(other.m_db) { other.m_db = nullptr; }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  Result<void> commit(std::string_view what);

 private:
  explicit Transaction(SqliteDb& db) : m_db(&db) {}
  SqliteDb* m_db;
};

}  // namespace jitcache::daemon::store
