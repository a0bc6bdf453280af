// The migrator against real SQLite files: version rows, idempotence, refusal of newer
// incompatible databases, all-or-nothing application, and files that are not jitcache stores.
#include <catch2/catch.hpp>

#include <sqlite3.h>
#include <stdlib.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>

#include <jitcache/schema/migrations.hpp>

#include "store_dir.hpp"
#include <daemon/store/migrator.hpp>
#include <daemon/store/pragmas.hpp>
#include <daemon/store/sqlite_db.hpp>
#include <daemon/store/sqlite_store.hpp>

namespace {

using namespace jitcache;
using daemon::store::MigrationPlan;
using daemon::store::SqliteDb;
using proto::ErrorCode;

using testing::StoreDir;

SqliteDb open_db(const std::filesystem::path& path) {
  auto db = SqliteDb::open(path, daemon::store::OpenMode::read_write_create);
  REQUIRE(db.ok());
  return std::move(*db);
}

// Reads with a separate plain connection, so the checks do not depend on the code under test.
std::string query(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr);
  std::string out;
  if (rc == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
  return out;
}

void exec(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

std::string meta(const std::filesystem::path& path, const std::string& key) {
  return query(path, "SELECT value FROM meta WHERE key = '" + key + "'");
}

std::string table_names(const std::filesystem::path& path) {
  return query(path, "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_schema WHERE type = 'table' "
                     "ORDER BY name)");
}

}  // namespace

TEST_CASE("migrator: the embedded migrations are numbered from 1 without gaps up to the schema version") {
  const auto migrations = schema::migrations();
  REQUIRE(!migrations.empty());
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    CHECK(migrations[i].version == static_cast<int>(i + 1));
    CHECK(migrations[i].name.substr(0, 5) == std::string(4 - std::to_string(i + 1).size(), '0') +
                                                 std::to_string(i + 1) + "_");
    CHECK(!migrations[i].sql.empty());
  }
  CHECK(migrations.back().version == schema::k_schema_version);
  CHECK(schema::k_compatible_version <= schema::k_schema_version);
  CHECK(migrations.front().name == "0001_initial");
}

TEST_CASE("migrator: a new database gets every migration and its version rows") {
  StoreDir dir{"jitcache-migrator-test"};
  auto db = open_db(dir.db());
  auto outcome = daemon::store::migrate(db);
  INFO((outcome ? std::string() : outcome.error().message));
  REQUIRE(outcome.ok());
  CHECK(outcome->version_before == 0);
  CHECK(outcome->version_after == schema::k_schema_version);
  CHECK(outcome->applied == schema::k_schema_version);

  CHECK(meta(dir.db(), "version") == std::to_string(schema::k_schema_version));
  CHECK(meta(dir.db(), "compatible_version") == std::to_string(schema::k_compatible_version));
  CHECK(table_names(dir.db()) == "blobs,entries,meta,totals");
  CHECK(query(dir.db(), "SELECT entries || ',' || bytes_raw || ',' || bytes_stored FROM totals") == "0,0,0");
}

TEST_CASE("migrator: migrating an up-to-date database again changes nothing") {
  StoreDir dir{"jitcache-migrator-test"};
  {
    auto db = open_db(dir.db());
    REQUIRE(daemon::store::migrate(db).ok());
  }
  exec(dir.db(), "UPDATE totals SET entries = 42");  // a marker a re-run of 0001 would wipe or fail on
  auto db = open_db(dir.db());
  auto outcome = daemon::store::migrate(db);
  REQUIRE(outcome.ok());
  CHECK(outcome->applied == 0);
  CHECK(outcome->version_before == schema::k_schema_version);
  CHECK(outcome->version_after == schema::k_schema_version);
  CHECK(query(dir.db(), "SELECT entries FROM totals") == "42");
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM meta") == "2");
}

TEST_CASE("migrator: a database from a newer, incompatible jitcached is refused and left untouched") {
  StoreDir dir{"jitcache-migrator-test"};
  {
    auto db = open_db(dir.db());
    REQUIRE(daemon::store::migrate(db).ok());
  }
  const int future = schema::k_schema_version + 1;
  exec(dir.db(), "UPDATE meta SET value = '" + std::to_string(future) + "' WHERE key IN ('version', 'compatible_version')");

  auto db = open_db(dir.db());
  auto outcome = daemon::store::migrate(db);
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.error().code == ErrorCode::unsupported);
  CHECK_THAT(outcome.error().message, Catch::Contains("schema version " + std::to_string(future)));
  CHECK_THAT(outcome.error().message, Catch::Contains(dir.db().string()));
  CHECK(meta(dir.db(), "version") == std::to_string(future));

  daemon::store::SqliteStoreOptions options;
  options.path = dir.db();
  auto store = daemon::store::SqliteStore::open(options);
  REQUIRE_FALSE(store.ok());
  CHECK(store.error().code == ErrorCode::unsupported);
}

TEST_CASE("migrator: a newer database that is still compatible is used as it is") {
  StoreDir dir{"jitcache-migrator-test"};
  {
    auto db = open_db(dir.db());
    REQUIRE(daemon::store::migrate(db).ok());
  }
  const int future = schema::k_schema_version + 3;
  exec(dir.db(), "UPDATE meta SET value = '" + std::to_string(future) + "' WHERE key = 'version'");
  auto db = open_db(dir.db());
  auto outcome = daemon::store::migrate(db);
  REQUIRE(outcome.ok());
  CHECK(outcome->applied == 0);
  CHECK(outcome->version_after == future);
  CHECK(meta(dir.db(), "version") == std::to_string(future));  // never downgraded
}

TEST_CASE("migrator: pending migrations are applied in one transaction, all or nothing") {
  StoreDir dir{"jitcache-migrator-test"};
  const auto initial = schema::migrations().front();
  const std::array<schema::Migration, 2> good{{
      initial,
      {2, "0002_extra", "CREATE TABLE extra (id INTEGER PRIMARY KEY NOT NULL) STRICT;"},
  }};
  const std::array<schema::Migration, 2> broken{{
      initial,
      {2, "0002_broken", "CREATE TABLE extra (id INTEGER PRIMARY KEY NOT NULL) STRICT; CREATE TABLE oops (;"},
  }};
  const MigrationPlan only_initial{std::span(good).first(1), 1, 1};
  const MigrationPlan good_plan{good, 2, 1};
  const MigrationPlan broken_plan{broken, 2, 1};

  SECTION("a failing migration on a new database leaves it empty") {
    auto db = open_db(dir.db());
    auto outcome = daemon::store::migrate(db, broken_plan);
    REQUIRE_FALSE(outcome.ok());
    CHECK_THAT(outcome.error().message, Catch::Contains("0002_broken"));
    CHECK(table_names(dir.db()).empty());
  }
  SECTION("a failing migration keeps the version it started from") {
    {
      auto db = open_db(dir.db());
      REQUIRE(daemon::store::migrate(db, only_initial).ok());
    }
    auto db = open_db(dir.db());
    REQUIRE_FALSE(daemon::store::migrate(db, broken_plan).ok());
    CHECK(meta(dir.db(), "version") == "1");
    CHECK(table_names(dir.db()) == "blobs,entries,meta,totals");

    auto outcome = daemon::store::migrate(db, good_plan);
    REQUIRE(outcome.ok());
    CHECK(outcome->version_before == 1);
    CHECK(outcome->applied == 1);
    CHECK(meta(dir.db(), "version") == "2");
    CHECK(meta(dir.db(), "compatible_version") == "1");
    CHECK(table_names(dir.db()) == "blobs,entries,extra,meta,totals");
  }
}

TEST_CASE("migrator: a file that is not an SQLite database is reported corrupt") {
  StoreDir dir{"jitcache-migrator-test"};
  {
    std::ofstream garbage(dir.db(), std::ios::binary);
    for (int i = 0; i < 256; ++i) garbage << "definitely not a database page ";
  }
  auto db = open_db(dir.db());
  auto outcome = daemon::store::migrate(db);
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.error().code == ErrorCode::corrupt);
  CHECK_THAT(outcome.error().message, Catch::Contains(dir.db().string()));
}

TEST_CASE("migrator: another program's SQLite database is reported corrupt, not adopted") {
  StoreDir dir{"jitcache-migrator-test"};
  exec(dir.db(), "CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)");
  auto db = open_db(dir.db());
  auto outcome = daemon::store::migrate(db);
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.error().code == ErrorCode::corrupt);
  CHECK_THAT(outcome.error().message, Catch::Contains("not a jitcache store"));
  CHECK(table_names(dir.db()) == "photos");
}

TEST_CASE("migrator: a meta table with an unreadable version is reported corrupt") {
  StoreDir dir{"jitcache-migrator-test"};
  {
    auto db = open_db(dir.db());
    REQUIRE(daemon::store::migrate(db).ok());
  }
  exec(dir.db(), "UPDATE meta SET value = 'seven' WHERE key = 'version'");
  auto db = open_db(dir.db());
  auto outcome = daemon::store::migrate(db);
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.error().code == ErrorCode::corrupt);
  CHECK_THAT(outcome.error().message, Catch::Contains("seven"));
}
