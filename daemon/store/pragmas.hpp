// Every PRAGMA (and connection-level SQLite setting) the store uses, applied in one function so the
// durability and locking behaviour of the database can be read in one place.
//
// Thread safety: operates on one connection, which the caller owns exclusively.
#pragma once

#include <chrono>
#include <cstdint>

#include <daemon/store/sqlite_db.hpp>

namespace jitcache::daemon::store {

enum class ConnectionRole {
  writer,  // the single connection that writes; switches the file to WAL
  reader,  // pooled, read-only (query_only) connections
};

struct PragmaOptions {
  // How long a connection waits for a lock held by another connection or process before BUSY.
  std::chrono::milliseconds busy_timeout{5000};
  // Page cache per connection, in KiB.
  std::int64_t cache_size_kib = 16 * 1024;
  // Memory-mapped reads for reader connections, in bytes (0: none). Writers never map.
  std::int64_t reader_mmap_bytes = 0;
};

// Applies the settings for `role`. On a file that is not an SQLite database this is the first
// thing to notice, and it fails with ErrorCode::corrupt.
Result<void> apply_pragmas(SqliteDb& db, ConnectionRole role, const PragmaOptions& options);

// The two read-only checks of the file (not settings, but PRAGMAs, so they live here too).
// quick_check at open (O(pages), skips index-to-table cross checks); integrity_check for VERIFY.
enum class IntegrityPragma { quick_check, integrity_check };
inline constexpr char k_integrity_ok[] = "ok";
// "ok", or the first k_max_integrity_lines findings joined by newlines. A database too damaged to
// run the check at all is an error (corrupt, via sqlite_error).
inline constexpr int k_max_integrity_lines = 20;
Result<std::string> run_integrity_pragma(SqliteDb& db, IntegrityPragma which);

}  // namespace jitcache::daemon::store
