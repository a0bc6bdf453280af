// Bytes by namespace (Store::namespace_totals, schema 5's namespace_totals table): exact through
// PUT, replacement, REMOVE and eviction, bounded to the largest namespaces plus "other", and seeded
// by the migration from a database that already had entries.
#include <catch2/catch.hpp>

#include <string>

#include <daemon/store/sqlite_store.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using namespace jitcache::testing;
using daemon::store::NamespaceTotals;

NamespaceTotals namespaces_ok(daemon::store::Tenancy& store, unsigned top) {
  auto totals = store.namespace_totals(top);
  INFO((totals ? std::string() : totals.error().message));
  REQUIRE(totals.ok());
  return *totals;
}

// What an independent connection sums from the entries themselves, as "entries|bytes".
std::string summed(const StoreDir& dir, std::uint32_t namespace_id) {
  return ExternalDb(dir.db()).text(
      "SELECT COUNT(*) || '|' || COALESCE(SUM(stored_size), 0) FROM entries WHERE "
      "namespace = " +
      std::to_string(namespace_id));
}

std::string reported(const NamespaceTotals& totals, std::uint32_t namespace_id) {
  for (const auto& usage : totals.largest) {
    if (usage.namespace_id == namespace_id) {
      return std::to_string(usage.entries) + "|" + std::to_string(usage.bytes_stored);
    }
  }
  return "absent";
}

}  // namespace

TEST_CASE("namespace totals: PUT, replacement and REMOVE keep each namespace's entries and bytes exact") {
  StoreDir dir;
  auto store = open_store(dir);
  put_ok(*store, make_put(make_key(1), make_image(1, 10'000), 0));
  put_ok(*store, make_put(make_key(2), make_image(2, 20'000), 1000));
  put_ok(*store, make_put(make_key(3), make_image(3, 30'000), 1000));
  auto totals = namespaces_ok(*store, 10);
  CHECK(reported(totals, 0) == summed(dir, 0));
  CHECK(reported(totals, 1000) == summed(dir, 1000));
  CHECK(reported(totals, 1000).starts_with("2|"));

  // Replaced with an image of another size: the bytes follow, the count does not change.
  put_ok(*store, make_put(make_key(2), make_image(4, 5'000), 1000));
  totals = namespaces_ok(*store, 10);
  CHECK(reported(totals, 1000) == summed(dir, 1000));
  CHECK(reported(totals, 1000).starts_with("2|"));

  auto removed = store->remove(proto::to_hex(proto::key_id(make_key(3))), Visibility{1000, false});
  REQUIRE(removed.ok());
  REQUIRE(*removed == 1);
  removed = store->remove(proto::to_hex(proto::key_id(make_key(2))), Visibility{1000, false});
  REQUIRE(removed.ok());
  totals = namespaces_ok(*store, 10);
  CHECK(reported(totals, 1000) == "absent");  // its last entry went: no row left behind
  CHECK(reported(totals, 0) == summed(dir, 0));
}

TEST_CASE("namespace totals: the shared namespace comes first even when empty, and beyond the top few is other") {
  StoreDir dir;
  auto store = open_store(dir);
  auto empty = namespaces_ok(*store, 2);
  REQUIRE(empty.largest.size() == 1);
  CHECK(empty.largest[0].namespace_id == 0);
  CHECK(empty.largest[0].bytes_stored == 0);

  // uids 1001..1004 with 1, 2, 3, 4 entries of one image size: 1004 and 1003 are the largest two.
  int seed = 10;
  for (std::uint32_t uid = 1001; uid <= 1004; ++uid) {
    for (std::uint32_t i = 0; i < uid - 1000; ++i)
      put_ok(*store, make_put(make_key(seed++), make_image(7, 8'000), uid));
  }
  const auto totals = namespaces_ok(*store, 2);
  REQUIRE(totals.largest.size() == 3);
  CHECK(totals.largest[0].namespace_id == 0);
  CHECK(totals.largest[1].namespace_id == 1004);
  CHECK(totals.largest[2].namespace_id == 1003);
  CHECK(totals.other_namespaces == 2);
  CHECK(totals.other.entries == 3);
  const auto [e1001, b1001] = std::pair(summed(dir, 1001), summed(dir, 1002));
  const std::uint64_t other_bytes =
      std::stoull(e1001.substr(e1001.find('|') + 1)) + std::stoull(b1001.substr(b1001.find('|') + 1));
  CHECK(totals.other.bytes_stored == other_bytes);
}

TEST_CASE("namespace totals: eviction is subtracted like any delete") {
  StoreDir dir;
  SqliteStoreOptions options;
  options.path = dir.db();
  options.reader_count = 2;
  options.compression_level = 0;
  options.max_size_bytes = 1 << 20;
  auto store = open_store(options);
  for (int i = 0; i < 12; ++i) put_ok(*store, make_put(make_key(100 + i), make_image(100 + i, 200'000), 1000));
  auto totals = store->totals();
  REQUIRE(totals.ok());
  REQUIRE(totals->evictions > 0);
  CHECK(reported(namespaces_ok(*store, 10), 1000) == summed(dir, 1000));
}

TEST_CASE("namespace totals: migration 5 seeds the table from the entries already stored") {
  StoreDir dir;
  {
    auto store = open_store(dir);
    put_ok(*store, make_put(make_key(1), make_image(1, 10'000), 0));
    put_ok(*store, make_put(make_key(2), make_image(2, 20'000), 2000));
  }
  {
    // As a schema-4 database would be: no table, no triggers, version 4.
    ExternalDb external(dir.db());
    external.exec("DROP TRIGGER entries_namespace_totals_after_insert");
    external.exec("DROP TRIGGER entries_namespace_totals_after_delete");
    external.exec("DROP TRIGGER entries_namespace_totals_after_update");
    external.exec("DROP TABLE namespace_totals");
    external.exec("DROP TRIGGER entries_failure_reports_after_replace");
    external.exec("DROP TABLE failure_reports");
    // ... nor those of schema 6.
    external.exec("DROP TRIGGER entries_drivers_after_insert");
    external.exec("DROP TRIGGER entries_drivers_after_replace");
    external.exec("DROP TRIGGER entries_drivers_after_delete");
    // ... nor those of schema 7.
    external.exec("DROP TRIGGER entries_need_a_fast_key_on_insert");
    external.exec("DROP TRIGGER entries_need_a_fast_key_on_update");
    // ... nor those of schema 8.
    external.exec("DROP INDEX entries_by_priority");
    external.exec("DROP INDEX entries_by_content_namespace");  // schema 10's, in place of it
    external.exec("ALTER TABLE entries DROP COLUMN priority");
    external.exec("DROP TABLE eviction_inflation");
    // ... nor those of schema 9.
    external.exec("DROP TRIGGER entry_sources_after_delete");
    external.exec("DROP TRIGGER sources_totals_after_insert");
    external.exec("DROP TRIGGER sources_totals_after_delete");
    external.exec("DROP TABLE entry_sources");
    external.exec("DROP TABLE sources");
    external.exec("ALTER TABLE totals DROP COLUMN sources");
    external.exec("ALTER TABLE totals DROP COLUMN source_bytes");
    // ... nor schema 11's.
    external.exec("DROP TABLE removed_keys");
    external.exec("UPDATE meta SET value = '4' WHERE key = 'version'");
  }
  auto store = open_store(dir);
  const auto totals = namespaces_ok(*store, 10);
  CHECK(reported(totals, 0) == summed(dir, 0));
  CHECK(reported(totals, 2000) == summed(dir, 2000));
  CHECK(reported(totals, 2000).starts_with("1|"));
}
