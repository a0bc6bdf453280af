#include <daemon/store/sqlite_db.hpp>

#include <sqlite3.h>

#include <common/result.hpp>
#include <daemon/store/store_faults.hpp>
#include <utility>

namespace jitcache::daemon::store {

using common::ErrorCode;
using common::make_error;

ErrorCode map_sqlite_code(int rc) {
  switch (rc & 0xFF) {
    case SQLITE_FULL: return ErrorCode::no_space;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return ErrorCode::corrupt;
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return ErrorCode::unavailable;
    case SQLITE_TOOBIG: return ErrorCode::too_large;
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM: return ErrorCode::io;
    default: return ErrorCode::internal;
  }
}

Error sqlite_error(sqlite3* db, int rc, std::string_view what) {
  std::string message(what);
  message += ": ";
  // sqlite3_errmsg describes the connection's most recent failure, which can be more specific than
  // the code's generic text ("no such table: meta" rather than "SQL logic error"); it is only
  // trustworthy while it still refers to this rc.
  if (db != nullptr && sqlite3_extended_errcode(db) == rc) {
    message += sqlite3_errmsg(db);
  } else {
    message += sqlite3_errstr(rc);
  }
  message += " (SQLite code ";
  message += std::to_string(rc);
  message += ")";
  return make_error(map_sqlite_code(rc), std::move(message));
}

// --- Statement ---

Statement::~Statement() { sqlite3_finalize(m_stmt); }

void Statement::bind(int index, std::int64_t value) {
  int rc = sqlite3_bind_int64(m_stmt, index, value);
  if (rc != SQLITE_OK && m_bind_rc == SQLITE_OK) m_bind_rc = rc;
}

void Statement::bind_double(int index, double value) {
  int rc = sqlite3_bind_double(m_stmt, index, value);
  if (rc != SQLITE_OK && m_bind_rc == SQLITE_OK) m_bind_rc = rc;
}

void Statement::bind_text(int index, std::string_view text) {
  int rc = sqlite3_bind_text64(m_stmt, index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8);
  if (rc != SQLITE_OK && m_bind_rc == SQLITE_OK) m_bind_rc = rc;
}

void Statement::bind_null(int index) {
  int rc = sqlite3_bind_null(m_stmt, index);
  if (rc != SQLITE_OK && m_bind_rc == SQLITE_OK) m_bind_rc = rc;
}

void Statement::bind_blob(int index, proto::Bytes bytes) {
  // An empty span may carry a null pointer, which SQLite would bind as NULL rather than x''.
  static constexpr std::uint8_t k_empty = 0;
  const void* data = bytes.empty() ? &k_empty : bytes.data();
  int rc = sqlite3_bind_blob64(m_stmt, index, data, bytes.size(), SQLITE_STATIC);
  if (rc != SQLITE_OK && m_bind_rc == SQLITE_OK) m_bind_rc = rc;
}

Result<bool> Statement::step(std::string_view what) {
  sqlite3* db = sqlite3_db_handle(m_stmt);
  if (m_bind_rc != SQLITE_OK) return sqlite_error(nullptr, m_bind_rc, what);
  if (m_faults != nullptr) {
    if (auto fault = m_faults->before_step(sqlite3_sql(m_stmt))) {
      return Error{fault->code, std::string(what) + ": " + fault->message};
    }
  }
  int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sqlite_error(db, rc, what);
}

Result<void> Statement::run(std::string_view what) {
  for (;;) {
    auto row = step(what);
    JITCACHE_TRY(row);
    if (!*row) return {};
  }
}

std::int64_t Statement::column_int64(int index) const { return sqlite3_column_int64(m_stmt, index); }

double Statement::column_double(int index) const { return sqlite3_column_double(m_stmt, index); }

std::string Statement::column_text(int index) const {
  const auto* text = sqlite3_column_text(m_stmt, index);
  int size = sqlite3_column_bytes(m_stmt, index);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
}

proto::Bytes Statement::column_blob(int index) const {
  const void* data = sqlite3_column_blob(m_stmt, index);
  int size = sqlite3_column_bytes(m_stmt, index);
  if (data == nullptr) return {};
  return proto::Bytes(static_cast<const std::uint8_t*>(data), static_cast<std::size_t>(size));
}

bool Statement::column_is_null(int index) const { return sqlite3_column_type(m_stmt, index) == SQLITE_NULL; }

void Statement::reset() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
  m_bind_rc = SQLITE_OK;
}

// --- SqliteDb ---

Result<SqliteDb> SqliteDb::open(const std::filesystem::path& path, OpenMode mode, StoreFaults* faults) {
  // Rationale: NOMUTEX (multi-thread mode) because a connection is only ever used by one thread at
  // a time (see the header); SQLite's per-connection mutex would be pure overhead.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (mode == OpenMode::read_write_create) flags |= SQLITE_OPEN_CREATE;
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Error error = sqlite_error(db, rc, "opening the store database " + path.string());
    sqlite3_close_v2(db);
    return error;
  }
  sqlite3_extended_result_codes(db, 1);
  return SqliteDb(db, path, faults);
}

SqliteDb::SqliteDb(sqlite3* db, std::filesystem::path path, StoreFaults* faults)
    : m_db(db), m_path(std::move(path)), m_faults(faults) {}

SqliteDb::SqliteDb(SqliteDb&& other) noexcept
    : m_db(std::exchange(other.m_db, nullptr)),
      m_path(std::move(other.m_path)),
      m_faults(other.m_faults),
      m_statements(std::move(other.m_statements)) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    close();
    m_db = std::exchange(other.m_db, nullptr);
    m_path = std::move(other.m_path);
    m_faults = other.m_faults;
    m_statements = std::move(other.m_statements);
  }
  return *this;
}

SqliteDb::~SqliteDb() { close(); }

void SqliteDb::close() {
  m_statements.clear();  // finalize before closing, or sqlite3_close would refuse
  if (m_db != nullptr) sqlite3_close_v2(m_db);
  m_db = nullptr;
}

Result<void> SqliteDb::exec(std::string_view sql, std::string_view what) {
  std::string text(sql);  // sqlite3_exec wants a NUL-terminated string
  int rc = sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return sqlite_error(m_db, rc, what);
  return {};
}

Result<StatementRef> SqliteDb::statement(std::string_view sql) {
  auto found = m_statements.find(sql);
  if (found != m_statements.end()) return StatementRef(found->second.get());
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(m_db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt, &tail);
  if (rc != SQLITE_OK) return sqlite_error(m_db, rc, "preparing \"" + std::string(sql) + "\" on " + m_path.string());
  if (stmt == nullptr || tail != sql.data() + sql.size()) {
    sqlite3_finalize(stmt);
    return common::make_error(ErrorCode::internal, "\"" + std::string(sql) + "\" is not exactly one SQL statement");
  }
  auto& slot = m_statements[std::string(sql)];
  slot = std::make_unique<Statement>(stmt, m_faults);
  return StatementRef(slot.get());
}

Result<std::string> SqliteDb::query_text(std::string_view sql, std::string_view what) {
  auto stmt = statement(sql);
  JITCACHE_TRY(stmt);
  auto row = (*stmt)->step(what);
  JITCACHE_TRY(row);
  if (!*row) return make_error(ErrorCode::internal, std::string(what) + ": no result row");
  return (*stmt)->column_text(0);
}

Result<std::optional<ImageBuffer>> SqliteDb::read_blob(const char* table, const char* column, std::int64_t rowid,
                                                       std::string_view what) {
  sqlite3_blob* blob = nullptr;
  int rc = sqlite3_blob_open(m_db, "main", table, column, rowid, 0, &blob);
  if (rc != SQLITE_OK) {
    sqlite3_blob_close(blob);
    // Plain SQLITE_ERROR is how sqlite3_blob_open says "no such row" (or a non-blob cell); every
    // other code is a real failure of the database.
    if (rc == SQLITE_ERROR) return std::optional<ImageBuffer>();
    return sqlite_error(m_db, rc, what);
  }
  const int size = sqlite3_blob_bytes(blob);
  ImageBuffer data(static_cast<std::size_t>(size));  // not zero-filled: the read overwrites every byte
  rc = size == 0 ? SQLITE_OK : sqlite3_blob_read(blob, data.data(), size, 0);
  Error error;
  if (rc != SQLITE_OK) error = sqlite_error(m_db, rc, what);
  sqlite3_blob_close(blob);
  if (rc != SQLITE_OK) return error;
  return std::optional<ImageBuffer>(std::move(data));
}

std::int64_t SqliteDb::changes() const { return sqlite3_changes64(m_db); }

std::int64_t SqliteDb::last_insert_rowid() const { return sqlite3_last_insert_rowid(m_db); }

bool SqliteDb::in_transaction() const { return sqlite3_get_autocommit(m_db) == 0; }

// --- Transaction ---

Result<Transaction> Transaction::begin(SqliteDb& db, TransactionKind kind, std::string_view what) {
  auto stmt = db.statement(kind == TransactionKind::immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
  JITCACHE_TRY(stmt);
  JITCACHE_TRY((*stmt)->run(what));
  return Transaction(db);
}

Result<void> Transaction::commit(std::string_view what) {
  auto stmt = m_db->statement("COMMIT");
  JITCACHE_TRY(stmt);
  JITCACHE_TRY((*stmt)->run(what));
  m_db = nullptr;
  return {};
}

Transaction::~Transaction() {
  // SQLite rolls back by itself after some failures (SQLITE_FULL, SQLITE_IOERR, ...); a second
  // ROLLBACK would only fail with "no transaction is active".
  if (m_db == nullptr || !m_db->in_transaction()) return;
  if (auto stmt = m_db->statement("ROLLBACK")) (void)(*stmt)->run("rolling back");
}

}  // namespace jitcache::daemon::store
