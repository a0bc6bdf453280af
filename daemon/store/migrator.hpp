// Brings a store database up to the schema this code was built with (schema/, jitcache_schema):
// applies every pending migration and records the result in the meta table, all in ONE
// transaction, so a crash or a failing migration leaves the file exactly as it was.
//
// Thread safety: runs on the writer connection, which the caller owns exclusively; call it once,
// before any other connection uses the database.
#pragma once

#include <span>

#include <schema/migrations.hpp>

#include <daemon/store/sqlite_db.hpp>

namespace jitcache::daemon::store {

// What this code offers. Tests substitute their own lists; the daemon uses the defaults.
struct MigrationPlan {
  std::span<const schema::Migration> migrations = schema::migrations();
  int schema_version = schema::k_schema_version;
  int compatible_version = schema::k_compatible_version;
};

struct MigrationOutcome {
  int version_before = 0;  // 0: a new, empty database
  int version_after = 0;   // may exceed the plan's schema_version when newer code wrote the file
  int applied = 0;         // migrations run now
};

// Errors:
//   unsupported  the database's compatible_version is newer than plan.schema_version: newer code
//                changed it in a way this code cannot use. Nothing is changed.
//   corrupt      the file is not an SQLite database, or it has tables but no usable meta rows
//                (it is something else's database).
//   others       as mapped by sqlite_error (e.g. no_space while applying a migration).
Result<MigrationOutcome> migrate(SqliteDb& db, const MigrationPlan& plan = {});

}  // namespace jitcache::daemon::store
