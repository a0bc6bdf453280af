#include <daemon/store/migrator.hpp>

#include <spdlog/spdlog.h>

#include <charconv>
#include <common/result.hpp>
#include <string>

namespace jitcache::daemon::store {

using common::ErrorCode;
using common::make_error;

namespace {

struct StoredVersions {
  int version = 0;
  int compatible_version = 0;
};

Result<void> check_plan(const MigrationPlan& plan) {
  int expected = 1;
  for (const auto& migration : plan.migrations) {
    if (migration.version != expected) {
      return make_error(ErrorCode::internal, "migration " + std::string(migration.name) + " has version " +
                                                 std::to_string(migration.version) + ", expected " +
                                                 std::to_string(expected));
    }
    ++expected;
  }
  if (expected - 1 != plan.schema_version || plan.compatible_version < 1 ||
      plan.compatible_version > plan.schema_version) {
    return make_error(ErrorCode::internal, "inconsistent schema plan: " + std::to_string(expected - 1) +
                                               " migrations, schema version " + std::to_string(plan.schema_version) +
                                               ", compatible version " + std::to_string(plan.compatible_version));
  }
  return {};
}

Result<int> read_meta_int(SqliteDb& db, const char* key, const std::string& where) {
  auto stmt = db.statement("SELECT value FROM meta WHERE key = ?");
  JITCACHE_TRY(stmt);
  (*stmt)->bind_text(1, key);
  auto row = (*stmt)->step("reading the schema version of " + where);
  JITCACHE_TRY(row);
  if (!*row) return make_error(ErrorCode::corrupt, where + " has a meta table without a '" + key + "' row");
  const std::string text = (*stmt)->column_text(0);
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1) {
    return make_error(ErrorCode::corrupt, where + " has an unreadable meta '" + key + "' value \"" + text + "\"");
  }
  return value;
}

// Version 0 for an empty database; corrupt for a database that is something else's.
Result<StoredVersions> read_versions(SqliteDb& db, const std::string& where) {
  auto stmt = db.statement(
      "SELECT COUNT(*), COALESCE(SUM(name = 'meta'), 0) FROM sqlite_schema "
      "WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'");
  JITCACHE_TRY(stmt);
  auto row = (*stmt)->step("reading the tables of " + where);
  JITCACHE_TRY(row);
  const std::int64_t tables = *row ? (*stmt)->column_int64(0) : 0;
  const bool has_meta = *row && (*stmt)->column_int64(1) > 0;
  if (!has_meta) {
    if (tables > 0) {
      return make_error(ErrorCode::corrupt, where + " has tables but no meta table: it is not a jitcache store");
    }
    return StoredVersions{};
  }
  StoredVersions versions;
  auto version = read_meta_int(db, "version", where);
  JITCACHE_TRY(version);
  auto compatible = read_meta_int(db, "compatible_version", where);
  JITCACHE_TRY(compatible);
  versions.version = *version;
  versions.compatible_version = *compatible;
  return versions;
}

Result<void> write_meta_int(SqliteDb& db, const char* key, int value, const std::string& where) {
  auto stmt = db.statement(
      "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  JITCACHE_TRY(stmt);
  const std::string text = std::to_string(value);
  (*stmt)->bind_text(1, key);
  (*stmt)->bind_text(2, text);
  return (*stmt)->run("recording the schema version of " + where);
}

}  // namespace

Result<MigrationOutcome> migrate(SqliteDb& db, const MigrationPlan& plan) {
  JITCACHE_TRY(check_plan(plan));
  const std::string where = "the store database " + db.path().string();

  // Rationale: IMMEDIATE takes the write lock before reading the version, so two processes that
  // open one new file at once cannot both decide to apply migration 1.
  auto transaction = Transaction::begin(db, TransactionKind::immediate, "starting the migration of " + where);
  JITCACHE_TRY(transaction);

  auto stored = read_versions(db, where);
  JITCACHE_TRY(stored);
  if (stored->compatible_version > plan.schema_version) {
    return make_error(ErrorCode::unsupported,
                      where + " has schema version " + std::to_string(stored->version) +
                          " and can only be used by code that knows schema version " +
                          std::to_string(stored->compatible_version) + " or later; this jitcached knows up to " +
                          std::to_string(plan.schema_version) +
                          ". Upgrade jitcached, or move the database aside to start an empty cache.");
  }

  MigrationOutcome outcome;
  outcome.version_before = stored->version;
  outcome.version_after = stored->version;
  for (const auto& migration : plan.migrations) {
    if (migration.version <= stored->version) continue;
    if (auto r = db.exec(migration.sql, "applying schema migration " + std::string(migration.name) + " to " + where);
        !r) {
      return r.error();
    }
    outcome.version_after = migration.version;
    ++outcome.applied;
  }
  if (outcome.applied > 0) {
    JITCACHE_TRY(write_meta_int(db, "version", outcome.version_after, where));
    JITCACHE_TRY(write_meta_int(db, "compatible_version", plan.compatible_version, where));
  }
  JITCACHE_TRY(transaction->commit("committing the migration of " + where));

  if (outcome.applied > 0) {
    spdlog::info("store: migrated {} from schema version {} to {}", db.path().string(), outcome.version_before,
                 outcome.version_after);
  } else if (outcome.version_after > plan.schema_version) {
    spdlog::info("store: {} has newer schema version {}, compatible with this jitcached (schema version {})",
                 db.path().string(), outcome.version_after, plan.schema_version);
  }
  return outcome;
}

}  // namespace jitcache::daemon::store
