#include <daemon/store/store_database.hpp>

#include <sqlite3.h>

#include <string>
#include <utility>

#include <common/result.hpp>
#include <daemon/store/eviction.hpp>
#include <daemon/store/image_codec.hpp>
#include <daemon/store/migrator.hpp>
#include <daemon/store/pragmas.hpp>

namespace jitcache::daemon::store {

using common::ErrorCode;
using common::make_error;

Result<std::unique_ptr<StoreDatabase>> open_store_database(const SqliteStoreOptions& options) {
  if (options.reader_count == 0) {
    return make_error(ErrorCode::invalid_argument, "the store needs at least one reader connection");
  }
  if (options.compression_level < 0 || options.compression_level > config::k_max_compression_level) {
    return make_error(ErrorCode::invalid_argument, "compression level " + std::to_string(options.compression_level) +
                                                       " is not within 0.." +
                                                       std::to_string(config::k_max_compression_level));
  }
  const PragmaOptions pragmas{options.busy_timeout, options.cache_size_kib, options.reader_mmap_bytes};

  auto writer = SqliteDb::open(options.path, OpenMode::read_write_create, options.faults);
  JITCACHE_TRY(writer);
  JITCACHE_TRY(apply_pragmas(*writer, ConnectionRole::writer, pragmas));
  if (options.quick_check_at_open || options.recover) {
    // Before the migrations, which would otherwise be the first to trip over a damaged page.
    auto verdict = run_integrity_pragma(*writer, IntegrityPragma::quick_check);
    JITCACHE_TRY(verdict);
    if (*verdict != k_integrity_ok) {
      return make_error(ErrorCode::corrupt,
                        "the store database " + options.path.string() + " fails PRAGMA quick_check: " + *verdict);
    }
  }
  JITCACHE_TRY(migrate(*writer));
  JITCACHE_TRY(sync_drivers(*writer));

  // Rationale: readers are opened read-write and made read-only with PRAGMA query_only rather than
  // SQLITE_OPEN_READONLY: a read-only connection cannot recover or rebuild the WAL index (-shm)
  // that a crashed writer left behind, and would fail where this one just works.
  std::vector<std::unique_ptr<SqliteDb>> readers;
  for (unsigned i = 0; i < options.reader_count; ++i) {
    auto reader = SqliteDb::open(options.path, OpenMode::read_write, options.faults);
    JITCACHE_TRY(reader);
    JITCACHE_TRY(apply_pragmas(*reader, ConnectionRole::reader, pragmas));
    readers.push_back(std::make_unique<SqliteDb>(std::move(*reader)));
  }
  return std::make_unique<StoreDatabase>(std::move(*writer), std::move(readers),
                                         std::make_shared<const DatabaseFiles>(DatabaseFiles::snapshot(options.path)));
}

void StoreDatabase::leave_files_at_close() {
  auto persist = [](SqliteDb& db) {
    int on = 1;
    sqlite3_file_control(db.handle(), "main", SQLITE_FCNTL_PERSIST_WAL, &on);
  };
  persist(writer);
  std::vector<ConnectionPool<SqliteDb>::Lease> leased;
  for (std::size_t i = 0; i < readers.size(); ++i) {
    leased.push_back(readers.acquire());
    persist(*leased.back());
  }
}

}  // namespace jitcache::daemon::store
