#include <daemon/store/pragmas.hpp>

#include <sqlite3.h>

#include <common/result.hpp>
#include <string>

namespace jitcache::daemon::store {

namespace {

Result<void> set_db_config(SqliteDb& db, int option, int value, std::string_view what) {
  int rc = sqlite3_db_config(db.handle(), option, value, nullptr);
  if (rc != SQLITE_OK) return sqlite_error(db.handle(), rc, what);
  return {};
}

}  // namespace

Result<void> apply_pragmas(SqliteDb& db, ConnectionRole role, const PragmaOptions& options) {
  // Defensive mode forbids what could corrupt the file from SQL (writable_schema and friends), and
  // double-quoted string literals are turned off so a misspelt column name is an error, not a string.
  if (auto r = set_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, "enabling SQLite defensive mode"); !r) return r;
  if (auto r = set_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, "disabling double-quoted strings"); !r) return r;
  if (auto r = set_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, "disabling double-quoted strings"); !r) return r;

  // First, so that everything below (including the switch to WAL) waits for a lock instead of
  // failing at once when another process, e.g. `sqlite3` run by an operator, holds one.
  const std::string what = "configuring the store database " + db.path().string();
  if (auto r = db.exec("PRAGMA busy_timeout = " + std::to_string(options.busy_timeout.count()), what); !r) {
    return r;
  }

  if (role == ConnectionRole::writer) {
    // Rationale: 16 KiB pages instead of SQLite's 4 KiB. An image is a chain of overflow pages read
    // one page at a time; reading a 3.2 MB image with sqlite3_blob_read took 2.3 ms with 4 KiB
    // pages, 1.3 ms with 16 KiB and 0.7 ms with 64 KiB (warm page cache, no mmap). Larger pages
    // are not free: every page a transaction changes goes whole into the WAL, so a usage flush that
    // touches scattered entries rows writes four times more at 64 KiB than at 16 KiB. It only takes
    // effect on a new, empty file (before the first table exists); existing files keep theirs.
    if (auto r = db.exec("PRAGMA page_size = 16384", what); !r) return r;
    // journal_mode is persistent in the file and reports the mode actually in force, checked below.
    auto mode = db.query_text("PRAGMA journal_mode = WAL", "switching the store database to WAL");
    JITCACHE_TRY(mode);
    if (*mode != "wal") {
      return common::make_error(common::ErrorCode::unsupported, "the store database " + db.path().string() +
                                                                    " cannot use WAL (journal_mode is " + *mode +
                                                                    "); is it on a network file system?");
    }
  }

  // Rationale: WAL with synchronous=NORMAL fsyncs the WAL only at checkpoints, not at every
  // commit. The database stays consistent across any crash. A commit is in the WAL file (the OS
  // page cache) when COMMIT returns, so it survives the daemon being killed, SIGKILL included: a
  // PUT acknowledged after its commit is never lost to a process crash. Only a power loss or kernel
  // crash can lose the last transactions since the last checkpoint, which for a cache means a few
  // recompiles, not a wrong answer (each image is checksummed when read). FULL would add an fsync to
  // every PUT and every usage flush.
  std::string sql = "PRAGMA synchronous = NORMAL;";
  // Deleting an entry deletes its image (blobs.entry_id ... ON DELETE CASCADE).
  sql += "PRAGMA foreign_keys = ON;";
  // Negative: KiB rather than pages, so the figure does not depend on the page size.
  sql += "PRAGMA cache_size = -" + std::to_string(options.cache_size_kib) + ";";
  sql += "PRAGMA temp_store = MEMORY;";
  // Rationale: read connections map the file (store_mmap_size, 2 GiB by default; SQLite maps at
  // most 2 GiB in any case). A lookup in a large store reads three B-tree leaves it rarely has in
  // its page cache; mapped, they are read in place instead of copied by pread: a LOOKUP hit on a
  // million-entry store went from 1.5-1.9x the time on a thousand-entry store to 1.09x
  // (docs/benchmarks.md "Store scale"). The price: an I/O error under a mapped page, or the file
  // truncated underneath the daemon, arrives as SIGBUS and ends the daemon instead of failing one
  // request (startup/mapped_store_fault.hpp says so in the log); a restart checks the store.
  // The writer never maps: its reads are few, and a write through a mapping is not used.
  const std::int64_t mmap_bytes = role == ConnectionRole::reader ? options.reader_mmap_bytes : 0;
  sql += "PRAGMA mmap_size = " + std::to_string(mmap_bytes) + ";";

  if (role == ConnectionRole::writer) {
    // The WAL grows with the images written between checkpoints (up to 64 MiB each); truncate it
    // back after a checkpoint so one burst of large PUTs does not occupy the disk for good.
    sql += "PRAGMA journal_size_limit = 67108864;";
    // SQLite's default, stated so it is a decision: checkpoint once the WAL holds ~1000 pages.
    sql += "PRAGMA wal_autocheckpoint = 1000;";
  } else {
    // Lookups must never write (hits are batched by the store); this makes a stray write an error.
    sql += "PRAGMA query_only = ON;";
  }
  return db.exec(sql, what);
}

Result<std::string> run_integrity_pragma(SqliteDb& db, IntegrityPragma which) {
  const bool quick = which == IntegrityPragma::quick_check;
  const std::string sql = std::string(quick ? "PRAGMA quick_check(" : "PRAGMA integrity_check(") +
                          std::to_string(k_max_integrity_lines) + ")";
  const std::string what =
      std::string(quick ? "running quick_check on " : "running integrity_check on ") + db.path().string();
  auto stmt = db.statement(sql);
  JITCACHE_TRY(stmt);
  std::string findings;
  for (;;) {
    auto row = (*stmt)->step(what);
    JITCACHE_TRY(row);
    if (!*row) break;
    if (!findings.empty()) findings += '\n';
    findings += (*stmt)->column_text(0);
  }
  return findings.empty() ? std::string(k_integrity_ok) : findings;
}

}  // namespace jitcache::daemon::store
