// The migrator against real SQLite files: version rows, idempotence, refusal of newer
// incompatible databases, all-or-nothing application, and files that are not jitcache stores.
#include <catch2/catch.hpp>

#include <sqlite3.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <proto/digest.hpp>
#include <proto/key.hpp>
#include <schema/migrations.hpp>

#include <daemon/store/migrator.hpp>
#include <daemon/store/pragmas.hpp>
#include <daemon/store/sqlite_db.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/sqlite_text_query.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using common::ErrorCode;
using daemon::store::MigrationPlan;
using daemon::store::SqliteDb;

using testing::StoreDir;

SqliteDb open_db(const std::filesystem::path& path) {
  auto db = SqliteDb::open(path, daemon::store::OpenMode::read_write_create);
  REQUIRE(db.ok());
  return std::move(*db);
}

// Reads with a separate plain connection, so the checks do not depend on the code under test.
std::string query(const std::filesystem::path& path, const std::string& sql) { return testing::query_text(path, sql); }

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

// An entry and its image as code of schema version 1 wrote them: the columns of 0001_initial only.
void insert_version_1_entry(const std::filesystem::path& path, const proto::KeyFields& key, std::uint32_t namespace_id,
                            const std::vector<std::uint8_t>& image) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "PRAGMA foreign_keys = ON", nullptr, nullptr, nullptr) == SQLITE_OK);
  const proto::Digest256 key_id = proto::key_id(key);
  const proto::Checksum128 checksum = proto::xxh3_128(image);
  const auto size = static_cast<sqlite3_int64>(image.size());
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db,
                             "INSERT INTO entries (key_id, namespace, key_schema, content_digest, arch, driver_api,"
                             " driver_build, options, producer, codec, raw_size, stored_size, checksum, created_at_ms,"
                             " last_used_at_ms, hits, compile_time_us)"
                             " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'schema 1', 0, ?, ?, ?, 1000, 2000, 3, 4)",
                             -1, &stmt, nullptr) == SQLITE_OK);
  sqlite3_bind_blob(stmt, 1, key_id.bytes.data(), 32, SQLITE_TRANSIENT);
  sqlite3_bind_int64(stmt, 2, namespace_id);
  sqlite3_bind_int64(stmt, 3, key.key_schema);
  sqlite3_bind_blob(stmt, 4, key.content.bytes.data(), 32, SQLITE_TRANSIENT);
  sqlite3_bind_text(stmt, 5, key.arch.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(stmt, 6, key.driver_api);
  sqlite3_bind_text(stmt, 7, key.driver_build.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(stmt, 8, key.options.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(stmt, 9, size);
  sqlite3_bind_int64(stmt, 10, size);
  sqlite3_bind_blob(stmt, 11, checksum.bytes.data(), 16, SQLITE_TRANSIENT);
  CHECK(sqlite3_step(stmt) == SQLITE_DONE);
  sqlite3_finalize(stmt);
  const sqlite3_int64 id = sqlite3_last_insert_rowid(db);
  REQUIRE(sqlite3_prepare_v2(db, "INSERT INTO blobs (entry_id, data) VALUES (?, ?)", -1, &stmt, nullptr) == SQLITE_OK);
  sqlite3_bind_int64(stmt, 1, id);
  sqlite3_bind_blob(stmt, 2, image.data(), static_cast<int>(image.size()), SQLITE_TRANSIENT);
  CHECK(sqlite3_step(stmt) == SQLITE_DONE);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

// As a PUT with content_fast (any code of schema 3 and later) would have left the entries: each with
// a fast key of its own. Lookups by fast key are not what these tests check, so any 16 and 32 bytes do.
void give_every_entry_a_fast_key(const std::filesystem::path& path) {
  exec(path, "UPDATE entries SET content_fast = randomblob(16), fast_key_id = randomblob(32)");
}

// The migrations up to and including schema 6, the last before 0007 deletes entries without a
// fast key: for the tests of what 0002..0006 do with entries an older jitcached wrote.
MigrationPlan up_to_version_6() { return MigrationPlan{schema::migrations().first(6), 6, 2}; }

std::string table_names(const std::filesystem::path& path) {
  return query(path,
               "SELECT coalesce(group_concat(name, ','), '') FROM (SELECT name FROM sqlite_schema"
               " WHERE type = 'table' ORDER BY name)");
}

}  // namespace

TEST_CASE("migrator: the embedded migrations are numbered from 1 without gaps up to the schema version") {
  const auto migrations = schema::migrations();
  REQUIRE(!migrations.empty());
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    CHECK(migrations[i].version == static_cast<int>(i + 1));
    CHECK(migrations[i].name.substr(0, 5) ==
          std::string(4 - std::to_string(i + 1).size(), '0') + std::to_string(i + 1) + "_");
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
  CHECK(
      table_names(dir.db()) ==
      "blobs,drivers,entries,entry_sources,eviction_inflation,failure_reports,meta,namespace_totals,removed_keys,sources,totals");
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
  exec(dir.db(),
       "UPDATE meta SET value = '" + std::to_string(future) + "' WHERE key IN ('version', 'compatible_version')");

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

TEST_CASE(
    "migrator: a version-1 database holding entries migrates to the current version, and its entries are still served") {
  // Up to schema 6 both entries are kept as they were; then the shared one is given a fast key (as
  // a later PUT of it would have), and 0007 keeps that one only.
  StoreDir dir{"jitcache-migrator-test"};
  {
    auto db = open_db(dir.db());
    const MigrationPlan version_1{schema::migrations().first(1), 1, 1};
    REQUIRE(daemon::store::migrate(db, version_1).ok());
  }
  REQUIRE(meta(dir.db(), "version") == "1");
  const auto shared_image = testing::sample_image(1, 5000);
  const auto own_image = testing::sample_image(2, 700);
  insert_version_1_entry(dir.db(), testing::sample_key(1), 0, shared_image);
  insert_version_1_entry(dir.db(), testing::sample_key(2), 1000, own_image);
  {
    auto db = open_db(dir.db());
    REQUIRE(daemon::store::migrate(db, up_to_version_6()).ok());
  }
  // The new columns exist with their defaults. The migrated entries have no fast key (0003).
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM entries WHERE quarantined_at_ms IS NULL AND load_failures = 0") == "2");
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM entries WHERE content_fast IS NULL AND fast_key_id IS NULL") == "2");
  const proto::Checksum128 content_fast = testing::sample_content_fast(1);
  const proto::Digest256 fast_key_id = proto::fast_key_id(testing::sample_fast_key(1));
  exec(dir.db(), "UPDATE entries SET content_fast = x'" + proto::to_hex(content_fast) + "', fast_key_id = x'" +
                     proto::to_hex(fast_key_id) + "' WHERE namespace = 0");

  daemon::store::SqliteStoreOptions options;
  options.path = dir.db();
  auto store = daemon::store::SqliteStore::open(options);
  INFO((store ? std::string() : store.error().message));
  REQUIRE(store.ok());
  CHECK(meta(dir.db(), "version") == std::to_string(schema::k_schema_version));
  CHECK(meta(dir.db(), "compatible_version") == "2");

  const daemon::store::Visibility uid_1000{1000, false};
  auto shared = testing::lookup_key_id(**store, proto::key_id(testing::sample_key(1)), uid_1000);
  REQUIRE(shared.ok());
  REQUIRE(shared->has_value());
  CHECK(std::ranges::equal(*(*shared)->image, shared_image));
  CHECK((*shared)->info.producer == "schema 1");
  CHECK((*shared)->info.hits == 3);
  CHECK((*shared)->info.quarantined_at_ms == 0);
  auto by_fast_key = testing::lookup_fast_key_id(**store, fast_key_id, uid_1000);
  REQUIRE(by_fast_key.ok());
  REQUIRE(by_fast_key->has_value());
  CHECK(std::ranges::equal(*(*by_fast_key)->image, shared_image));
  // The entry without a fast key is gone (0007), with its bytes.
  auto own = testing::lookup_key_id(**store, proto::key_id(testing::sample_key(2)), uid_1000);
  REQUIRE(own.ok());
  CHECK_FALSE(own->has_value());
  auto totals = (*store)->totals();
  REQUIRE(totals.ok());
  CHECK(totals->entries == 1);
  CHECK(totals->bytes_raw == shared_image.size());
  CHECK(totals->entries_quarantined == 0);
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM blobs") == "1");
  CHECK(query(dir.db(), "SELECT group_concat(namespace || ':' || entries, ',') FROM namespace_totals") == "0:1");

  // The migrated entry can be quarantined.
  auto reported = (*store)->report_failure(proto::key_id(testing::sample_key(1)), daemon::store::Visibility{0, true},
                                           daemon::store::FailureReport{209, proto::FailureStage::image, "", 0});
  REQUIRE(reported.ok());
  REQUIRE(reported->has_value());
  CHECK((*reported)->verdict == daemon::store::ReportVerdict::quarantined);
  CHECK(query(dir.db(), "SELECT load_failures FROM entries WHERE namespace = 0") == "1");
}

TEST_CASE(
    "migrator: a version-6 database loses its entries without a fast key, and no such entry is written again (0007)") {
  StoreDir dir{"jitcache-migrator-test"};
  {
    auto db = open_db(dir.db());
    REQUIRE(daemon::store::migrate(db, up_to_version_6()).ok());
  }
  insert_version_1_entry(dir.db(), testing::sample_key(1), 0, testing::sample_image(1, 1000));
  insert_version_1_entry(dir.db(), testing::sample_key(2), 1000, testing::sample_image(2, 3000));
  exec(dir.db(), "UPDATE entries SET content_fast = randomblob(16), fast_key_id = randomblob(32) WHERE namespace = 0");
  insert_version_1_entry(dir.db(), testing::sample_key(3), 0, testing::sample_image(3, 5000));
  {
    auto db = open_db(dir.db());
    auto outcome = daemon::store::migrate(db);
    REQUIRE(outcome.ok());
    CHECK(outcome->version_before == 6);
    CHECK(outcome->applied == schema::k_schema_version - 6);
  }
  CHECK(meta(dir.db(), "version") == std::to_string(schema::k_schema_version));
  CHECK(meta(dir.db(), "compatible_version") == "2");
  CHECK(query(dir.db(), "SELECT lower(hex(content_digest)) FROM entries") ==
        proto::to_hex(testing::sample_key(1).content));
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM entries") == "1");
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM blobs") == "1");
  CHECK(query(dir.db(), "SELECT entries || ':' || bytes_raw FROM totals") == "1:1000");
  CHECK(query(dir.db(), "SELECT group_concat(namespace || ':' || entries, ',') FROM namespace_totals") == "0:1");

  // Code of an older schema may still open the file (compatible version 2); its PUT without
  // content_fast is refused by the file itself.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(dir.db().c_str(), &db) == SQLITE_OK);
  const int rc = sqlite3_exec(db, "UPDATE entries SET content_fast = NULL", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  CHECK(rc == SQLITE_CONSTRAINT);
}

TEST_CASE("migrator: 0008 gives entries an eviction priority column (NULL until the next eviction) and L = 0") {
  StoreDir dir{"jitcache-migrator-test"};
  {
    auto db = open_db(dir.db());
    REQUIRE(daemon::store::migrate(db, up_to_version_6()).ok());
  }
  insert_version_1_entry(dir.db(), testing::sample_key(1), 0, testing::sample_image(1, 1000));
  exec(dir.db(), "UPDATE entries SET content_fast = randomblob(16), fast_key_id = randomblob(32)");
  {
    auto db = open_db(dir.db());
    REQUIRE(daemon::store::migrate(db).ok());
  }
  CHECK(meta(dir.db(), "compatible_version") == "2");
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM entries WHERE priority IS NULL") == "1");
  CHECK(query(dir.db(), "SELECT value FROM eviction_inflation WHERE id = 0") == "0.0");
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'entries_by_priority'") == "1");
  // Schema 10 replaced entries_by_content with entries_by_content_namespace.
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'entries_by_content'") == "0");
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'entries_by_content_namespace'") == "1");
  // An older jitcached's INSERT, which names no priority, is still accepted.
  exec(dir.db(),
       "INSERT INTO entries (key_id, namespace, key_schema, content_digest, arch, driver_api, driver_build, options,"
       " producer, codec, raw_size, stored_size, checksum, created_at_ms, last_used_at_ms, hits, compile_time_us,"
       " content_fast, fast_key_id) SELECT randomblob(32), namespace, key_schema, content_digest, arch, driver_api,"
       " driver_build, options, producer, codec, raw_size, stored_size, checksum, created_at_ms, last_used_at_ms,"
       " hits, compile_time_us, randomblob(16), randomblob(32) FROM entries");
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM entries WHERE priority IS NULL") == "2");
}

TEST_CASE("migrator: schema 2 is not compatible with code of schema 1, which would serve quarantined entries") {
  StoreDir dir{"jitcache-migrator-test"};
  {
    auto db = open_db(dir.db());
    REQUIRE(daemon::store::migrate(db).ok());
  }
  auto db = open_db(dir.db());
  const MigrationPlan version_1{schema::migrations().first(1), 1, 1};
  auto outcome = daemon::store::migrate(db, version_1);
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.error().code == ErrorCode::unsupported);
  CHECK(
      table_names(dir.db()) ==
      "blobs,drivers,entries,entry_sources,eviction_inflation,failure_reports,meta,namespace_totals,removed_keys,sources,totals");
}

TEST_CASE("migrator: a version-3 database gets a drivers table seeded from its entries (0004)") {
  StoreDir dir{"jitcache-migrator-test"};
  {
    auto db = open_db(dir.db());
    const MigrationPlan version_3{schema::migrations().first(3), 3, 2};
    REQUIRE(daemon::store::migrate(db, version_3).ok());
  }
  REQUIRE(meta(dir.db(), "version") == "3");
  proto::KeyFields other_driver = testing::sample_key(3);
  other_driver.driver_build = "590.10";
  insert_version_1_entry(dir.db(), testing::sample_key(1), 0, testing::sample_image(1, 100));
  insert_version_1_entry(dir.db(), testing::sample_key(2), 1000, testing::sample_image(2, 100));
  insert_version_1_entry(dir.db(), other_driver, 0, testing::sample_image(3, 100));
  exec(dir.db(), "UPDATE entries SET last_used_at_ms = 5000 WHERE namespace = 1000");

  {
    auto db = open_db(dir.db());
    auto outcome = daemon::store::migrate(db, up_to_version_6());
    REQUIRE(outcome.ok());
    CHECK(outcome->version_before == 3);
  }
  CHECK(meta(dir.db(), "version") == "6");
  CHECK(meta(dir.db(), "compatible_version") == "2");
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM drivers") == "2");
  CHECK(query(dir.db(), "SELECT last_asked_at_ms FROM drivers WHERE driver_build = '580.159.04'") == "5000");
  CHECK(query(dir.db(), "SELECT last_asked_at_ms FROM drivers WHERE driver_build = '590.10'") == "2000");
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM sqlite_master WHERE name = 'entries_by_driver'") == "1");
}

TEST_CASE("migrator: a version-4 database gets namespace_totals seeded from its entries, kept by triggers (0005)") {
  StoreDir dir{"jitcache-migrator-test"};
  {
    auto db = open_db(dir.db());
    const MigrationPlan version_4{schema::migrations().first(4), 4, 2};
    REQUIRE(daemon::store::migrate(db, version_4).ok());
  }
  REQUIRE(meta(dir.db(), "version") == "4");
  insert_version_1_entry(dir.db(), testing::sample_key(1), 0, testing::sample_image(1, 1000));
  insert_version_1_entry(dir.db(), testing::sample_key(2), 1000, testing::sample_image(2, 3000));
  insert_version_1_entry(dir.db(), testing::sample_key(3), 1000, testing::sample_image(3, 5000));

  {
    auto db = open_db(dir.db());
    auto outcome = daemon::store::migrate(db, up_to_version_6());
    REQUIRE(outcome.ok());
    CHECK(outcome->version_before == 4);
  }
  CHECK(meta(dir.db(), "version") == "6");
  CHECK(meta(dir.db(), "compatible_version") == "2");
  const std::string per_namespace =
      "SELECT group_concat(namespace || ':' || entries || ':' || bytes_stored, ',') FROM "
      "(SELECT * FROM namespace_totals ORDER BY namespace)";
  CHECK(query(dir.db(), per_namespace) == "0:1:1000,1000:2:8000");
  // The triggers keep it from then on, whoever writes (an older jitcached included).
  exec(dir.db(), "DELETE FROM entries WHERE namespace = 0");
  CHECK(query(dir.db(), per_namespace) == "1000:2:8000");
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM failure_reports") == "0");
}

TEST_CASE("migrator: a version-5 database keeps only the drivers of its entries, and triggers keep it so (0006)") {
  StoreDir dir{"jitcache-migrator-test"};
  {
    auto db = open_db(dir.db());
    const MigrationPlan version_5{schema::migrations().first(5), 5, 2};
    REQUIRE(daemon::store::migrate(db, version_5).ok());
  }
  proto::KeyFields other_driver = testing::sample_key(2);
  other_driver.driver_build = "590.10";
  insert_version_1_entry(dir.db(), testing::sample_key(1), 0, testing::sample_image(1, 100));
  insert_version_1_entry(dir.db(), other_driver, 0, testing::sample_image(2, 100));
  // What schema-5 code left behind: a row for every driver a LOOKUP named, entries or not.
  exec(dir.db(),
       "INSERT INTO drivers (driver_api, driver_build, last_asked_at_ms) VALUES"
       " (13000, '580.159.04', 9000), (13000, '590.10', 9000), (13000, 'made.up.1', 9000),"
       " (13000, 'made.up.2', 9000), (12080, '570.1', 9000)");
  {
    auto db = open_db(dir.db());
    auto outcome = daemon::store::migrate(db, up_to_version_6());
    REQUIRE(outcome.ok());
    CHECK(outcome->version_before == 5);
  }
  CHECK(meta(dir.db(), "version") == "6");
  CHECK(meta(dir.db(), "compatible_version") == "2");
  const std::string drivers =
      "SELECT group_concat(driver_build || ':' || last_asked_at_ms, ',') FROM "
      "(SELECT * FROM drivers ORDER BY driver_build)";
  CHECK(query(dir.db(), drivers) == "580.159.04:9000,590.10:9000");

  // From now on, whoever writes: a new entry's driver gets a row as of its PUT, a replaced entry
  // moves its driver's time, and the last entry of a driver takes its row along.
  proto::KeyFields new_driver = testing::sample_key(3);
  new_driver.driver_build = "600.1";
  insert_version_1_entry(dir.db(), new_driver, 0, testing::sample_image(3, 100));
  CHECK(query(dir.db(), drivers) == "580.159.04:9000,590.10:9000,600.1:1000");
  exec(dir.db(), "UPDATE entries SET created_at_ms = 20000 WHERE driver_build = '590.10'");
  CHECK(query(dir.db(), drivers) == "580.159.04:9000,590.10:20000,600.1:1000");
  exec(dir.db(), "DELETE FROM entries WHERE driver_build = '590.10'");
  CHECK(query(dir.db(), drivers) == "580.159.04:9000,600.1:1000");
  exec(dir.db(), "UPDATE entries SET hits = hits + 1, last_used_at_ms = 30000");  // a usage flush: no change
  CHECK(query(dir.db(), drivers) == "580.159.04:9000,600.1:1000");

  // Rows an older jitcached adds meanwhile go at the next open (of the current schema, which keeps
  // only entries with a fast key: 0007).
  give_every_entry_a_fast_key(dir.db());
  exec(dir.db(), "INSERT INTO drivers (driver_api, driver_build, last_asked_at_ms) VALUES (13000, 'made.up.3', 1)");
  daemon::store::SqliteStoreOptions options;
  options.path = dir.db();
  REQUIRE(daemon::store::SqliteStore::open(options).ok());
  CHECK(query(dir.db(), drivers) == "580.159.04:9000,600.1:1000");
}

TEST_CASE("migrator: an older database gains the sources tables, and a source goes with its last entry (0009)") {
  StoreDir dir{"jitcache-migrator-test"};
  {
    auto db = open_db(dir.db());
    REQUIRE(daemon::store::migrate(db, up_to_version_6()).ok());
  }
  insert_version_1_entry(dir.db(), testing::sample_key(1), 0, testing::sample_image(1, 100));
  insert_version_1_entry(dir.db(), testing::sample_key(2), 0, testing::sample_image(2, 100));
  give_every_entry_a_fast_key(dir.db());
  {
    auto db = open_db(dir.db());
    auto outcome = daemon::store::migrate(db);
    REQUIRE(outcome.ok());
    CHECK(outcome->version_before == 6);
    CHECK(outcome->version_after == schema::k_schema_version);
  }
  CHECK(meta(dir.db(), "version") == std::to_string(schema::k_schema_version));
  CHECK(meta(dir.db(), "compatible_version") == "2");
  CHECK(query(dir.db(), "SELECT sources || ':' || source_bytes FROM totals") == "0:0");

  // Whoever writes: both entries compiled from one source, the totals kept by the triggers; the
  // source stays while one entry does.
  exec(dir.db(),
       "INSERT INTO sources (id, content_digest, codec, raw_size, stored_size, kept_at_ms, data)"
       " VALUES (7, randomblob(32), 0, 300, 300, 1, randomblob(300))");
  exec(dir.db(), "INSERT INTO entry_sources (entry_id, source_id, worker_options) SELECT id, 7, '' FROM entries");
  CHECK(query(dir.db(), "SELECT sources || ':' || source_bytes FROM totals") == "1:300");
  // Every connection of jitcached turns foreign keys on (daemon/store/pragmas.cpp).
  exec(dir.db(), "PRAGMA foreign_keys = ON; DELETE FROM entries WHERE id = (SELECT MIN(id) FROM entries)");
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM sources") == "1");
  exec(dir.db(), "PRAGMA foreign_keys = ON; DELETE FROM entries");
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM sources") == "0");
  CHECK(query(dir.db(), "SELECT COUNT(*) FROM entry_sources") == "0");
  CHECK(query(dir.db(), "SELECT sources || ':' || source_bytes FROM totals") == "0:0");
}
