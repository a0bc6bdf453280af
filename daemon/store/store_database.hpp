// StoreDatabase: one open store file — its single writer connection, its read connections and the
// identity of its files — set up the one way every store file is: PRAGMAs (pragmas.hpp), an
// optional quick_check, migrations (migrator.hpp) and the drivers table in step with the entries
// (eviction.hpp sync_drivers). SqliteStore holds the current one through RecoveringDatabase, which
// may replace it while the daemon runs.
//
// Thread safety: the writer belongs to whoever holds SqliteStore's writer mutex; each reader to the
// holder of its lease; `files` is immutable.
#pragma once

#include <memory>
#include <vector>

#include <common/result.hpp>

#include <daemon/store/connection_pool.hpp>
#include <daemon/store/database_files.hpp>
#include <daemon/store/sqlite_db.hpp>
#include <daemon/store/sqlite_store_options.hpp>

namespace jitcache::daemon::store {

struct StoreDatabase {
  StoreDatabase(SqliteDb writer_connection, std::vector<std::unique_ptr<SqliteDb>> reader_connections,
                std::shared_ptr<const DatabaseFiles> opened_files)
      : writer(std::move(writer_connection)), readers(std::move(reader_connections)), files(std::move(opened_files)) {}

  SqliteDb writer;
  ConnectionPool<SqliteDb> readers;
  // As they were once opened: compared with the paths before writes (shared, so the comparison can
  // run outside the recovering handle's mutex).
  std::shared_ptr<const DatabaseFiles> files;

  // Makes closing leave the -wal and -shm paths alone (SQLITE_FCNTL_PERSIST_WAL on every
  // connection). For a database whose files were deleted or replaced under it: the last connection
  // to close would otherwise unlink `<path>-wal` and `-shm` by name, which may by then be another
  // database's. Call only while no other call uses the database.
  void leave_files_at_close();
};

// Opens or creates the file, switches it to WAL, applies pending migrations and opens the readers.
// Errors: corrupt (not an SQLite database, not a jitcache one, or it fails quick_check when asked),
// unsupported (written by a newer, incompatible jitcached), invalid_argument (options), io,
// no_space.
Result<std::unique_ptr<StoreDatabase>> open_store_database(const SqliteStoreOptions& options);

}  // namespace jitcache::daemon::store
