// SqliteStore against a real SQLite file in a fresh temporary directory.
#include <catch2/catch.hpp>

#include <sqlite3.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <proto/digest.hpp>
#include <proto/key.hpp>

#include <daemon/store/hot_image_cache.hpp>
#include <daemon/store/migrator.hpp>
#include <daemon/store/pragmas.hpp>
#include <daemon/store/sqlite_db.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using common::ErrorCode;
using daemon::store::ListQuery;
using daemon::store::PutInput;
using daemon::store::SqliteStore;
using daemon::store::SqliteStoreOptions;
using daemon::store::Visibility;

using testing::StoreDir;
using namespace jitcache::testing;

}  // namespace

TEST_CASE("sqlite store: an image put is looked up with identical bytes and metadata") {
  StoreDir dir;
  FakeClock clock;
  auto store = open_store(dir, clock);
  const auto key = make_key(1);
  const auto image = make_image(1, 100'000);

  auto put = store->put(make_put(key, image));
  REQUIRE(put.ok());
  CHECK(put->key_id == proto::key_id(key));
  CHECK_FALSE(put->replaced);

  auto found = lookup_ok(*store, put->key_id);
  REQUIRE(found.has_value());
  REQUIRE(found->image);
  CHECK(std::ranges::equal(*found->image, image));
  const proto::EntryInfo& info = found->info;
  CHECK(info.key_id == put->key_id);
  CHECK(info.key == key);
  CHECK(info.namespace_id == 0);
  CHECK(info.producer == "nvJitLink 13.0");
  CHECK(info.codec == 0);
  CHECK(info.raw_size == image.size());
  CHECK(info.stored_size == image.size());
  CHECK(info.checksum == proto::xxh3_128(image));
  CHECK(info.created_at_ms == clock.now->load());
  CHECK(info.last_used_at_ms == clock.now->load());
  CHECK(info.hits == 0);
  CHECK(info.compile_time_us == 4'800'000);

  CHECK_FALSE(lookup_ok(*store, proto::key_id(make_key(2))).has_value());
}

TEST_CASE("sqlite store: an empty image is stored and served as empty") {
  StoreDir dir;
  auto store = open_store(dir);
  const std::vector<std::uint8_t> empty;
  const auto key_id = put_ok(*store, make_put(make_key(1), empty));
  auto found = lookup_ok(*store, key_id);
  REQUIRE(found.has_value());
  CHECK(found->image->empty());
  CHECK(found->info.raw_size == 0);
}

TEST_CASE("sqlite store: entries survive closing and reopening the database file") {
  StoreDir dir;
  const auto image = make_image(7, 4096);
  proto::Digest256 key_id;
  {
    auto store = open_store(dir);
    key_id = put_ok(*store, make_put(make_key(7), image, 1000));
  }
  auto store = open_store(dir);
  auto found = lookup_ok(*store, key_id, Visibility{1000, false});
  REQUIRE(found.has_value());
  CHECK(std::ranges::equal(*found->image, image));
  CHECK(found->info.namespace_id == 1000);
  CHECK(store->totals()->entries == 1);
}

TEST_CASE("sqlite store: putting the same key again replaces the image and says so") {
  StoreDir dir;
  FakeClock clock;
  auto store = open_store(dir, clock);
  const auto key = make_key(3);
  const auto first = make_image(1, 1000);
  const auto second = make_image(2, 3000);

  put_ok(*store, make_put(key, first, 0, "driver 13000/580.159.04"));
  REQUIRE(lookup_ok(*store, proto::key_id(key)).has_value());
  REQUIRE(store->flush_usage().ok());
  *clock.now += 5000;

  auto put = store->put(make_put(key, second, 0, "nvJitLink 13.0"));
  REQUIRE(put.ok());
  CHECK(put->replaced);

  auto found = lookup_ok(*store, put->key_id);
  REQUIRE(found.has_value());
  CHECK(std::ranges::equal(*found->image, second));
  CHECK(found->info.producer == "nvJitLink 13.0");
  CHECK(found->info.raw_size == second.size());
  CHECK(found->info.checksum == proto::xxh3_128(second));
  CHECK(found->info.created_at_ms == clock.now->load());
  CHECK(found->info.hits == 0);

  // The same key in another namespace is another entry, not a replacement.
  auto other = store->put(make_put(key, first, 1000));
  REQUIRE(other.ok());
  CHECK_FALSE(other->replaced);
  CHECK(store->totals()->entries == 2);
}

TEST_CASE("sqlite store: a lookup serves the shared entry before the caller's own") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto key = make_key(4);
  const auto own_image = make_image(40, 500);
  const auto shared_image = make_image(41, 600);
  const auto key_id = put_ok(*store, make_put(key, own_image, 1000));

  auto own = lookup_ok(*store, key_id, Visibility{1000, false});
  REQUIRE(own.has_value());
  CHECK(std::ranges::equal(*own->image, own_image));

  put_ok(*store, make_put(key, shared_image, 0));
  auto served = lookup_ok(*store, key_id, Visibility{1000, false});
  REQUIRE(served.has_value());
  CHECK(served->info.namespace_id == 0);
  CHECK(std::ranges::equal(*served->image, shared_image));
}

TEST_CASE("sqlite store: one uid cannot see another uid's entries") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto key_id = put_ok(*store, make_put(make_key(5), make_image(5, 300), 1000));
  const std::string hex = proto::to_hex(key_id);
  const Visibility other{2000, false};

  CHECK_FALSE(lookup_ok(*store, key_id, other).has_value());
  CHECK_FALSE(lookup_ok(*store, key_id, Visibility{}).has_value());
  auto by_prefix = testing::lookup_prefix(*store, hex.substr(0, 12), other);
  REQUIRE(by_prefix.ok());
  CHECK_FALSE(by_prefix->has_value());
  CHECK(list_all(*store, ListQuery{}, other).empty());

  // Being trusted lets a caller list and remove everywhere, but lookups still see only shared + own.
  CHECK_FALSE(lookup_ok(*store, key_id, Visibility{2000, true}).has_value());
  CHECK(list_all(*store, ListQuery{}, Visibility{2000, true}).size() == 1);
  CHECK(lookup_ok(*store, key_id, Visibility{1000, false}).has_value());
}

TEST_CASE("sqlite store: a key id prefix of any length from 8 to 64 digits finds the entry") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto image = make_image(6, 777);
  const auto key_id = put_ok(*store, make_put(make_key(6), image));
  const std::string hex = proto::to_hex(key_id);

  for (std::size_t digits : {8u, 9u, 15u, 32u, 33u, 63u, 64u}) {
    INFO(digits << " digits");
    auto found = testing::lookup_prefix(*store, hex.substr(0, digits), Visibility{});
    REQUIRE(found.ok());
    REQUIRE(found->has_value());
    CHECK(std::ranges::equal(*(*found)->image, image));
  }
  std::string upper = hex.substr(0, 11);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](char c) { return static_cast<char>(std::toupper(c)); });
  CHECK(testing::lookup_prefix(*store, upper, Visibility{})->has_value());

  // Changing only the last digit of an odd-length prefix must miss: the half byte counts.
  for (std::size_t digits : {9u, 63u}) {
    std::string wrong = hex.substr(0, digits);
    wrong.back() = wrong.back() == '0' ? '1' : '0';
    INFO(wrong);
    auto found = testing::lookup_prefix(*store, wrong, Visibility{});
    REQUIRE(found.ok());
    CHECK_FALSE(found->has_value());
  }

  for (const std::string& bad : {hex.substr(0, 7), std::string("0123456g"), hex + "0"}) {
    auto found = testing::lookup_prefix(*store, bad, Visibility{});
    REQUIRE_FALSE(found.ok());
    CHECK(found.error().code == ErrorCode::invalid_argument);
  }
}

TEST_CASE("sqlite store: a prefix matching two key ids is ambiguous, one key id in two namespaces is not") {
  StoreDir dir;
  auto store = open_store(dir);

  // Find two keys whose ids share their first 8 hex digits (a birthday search over 32 bits).
  std::unordered_map<std::uint32_t, int> seen;
  int first = -1;
  int second = -1;
  for (int seed = 0; seed < 2'000'000 && first < 0; ++seed) {
    const auto id = proto::key_id(make_key(seed));
    const std::uint32_t head = std::uint32_t{id.bytes[0]} << 24 | std::uint32_t{id.bytes[1]} << 16 |
                               std::uint32_t{id.bytes[2]} << 8 | id.bytes[3];
    auto [it, inserted] = seen.emplace(head, seed);
    if (!inserted) {
      first = it->second;
      second = seed;
    }
  }
  REQUIRE(first >= 0);
  const auto id_a = put_ok(*store, make_put(make_key(first), make_image(1, 10)));
  const auto id_b = put_ok(*store, make_put(make_key(second), make_image(2, 10), 1000));
  const std::string hex_a = proto::to_hex(id_a);
  const std::string hex_b = proto::to_hex(id_b);
  REQUIRE(hex_a.substr(0, 8) == hex_b.substr(0, 8));
  std::size_t common = 8;
  while (hex_a[common] == hex_b[common]) ++common;

  // The owner of b sees both: ambiguous.
  auto both = testing::lookup_prefix(*store, hex_a.substr(0, 8), Visibility{1000, false});
  REQUIRE_FALSE(both.ok());
  CHECK(both.error().code == ErrorCode::invalid_argument);
  CHECK_THAT(both.error().message, Catch::Contains("ambiguous"));
  // One more digit tells them apart (an odd length when `common` is even).
  auto one = testing::lookup_prefix(*store, hex_b.substr(0, common + 1), Visibility{1000, false});
  REQUIRE(one.ok());
  REQUIRE(one->has_value());
  CHECK((*one)->info.key_id == id_b);
  // Another uid sees only the shared one: no ambiguity within its visibility.
  auto visible = testing::lookup_prefix(*store, hex_a.substr(0, 8), Visibility{2000, false});
  REQUIRE(visible.ok());
  REQUIRE(visible->has_value());
  CHECK((*visible)->info.key_id == id_a);

  auto removed = store->remove(hex_a.substr(0, 8), Visibility{0, true});
  REQUIRE_FALSE(removed.ok());
  CHECK_THAT(removed.error().message, Catch::Contains("ambiguous"));
  CHECK(store->totals()->entries == 2);

  // The same key id in the shared and an own namespace is one key id, not ambiguous.
  put_ok(*store, make_put(make_key(first), make_image(3, 10), 1000));
  auto same = testing::lookup_prefix(*store, hex_a.substr(0, common + 1), Visibility{1000, false});
  REQUIRE(same.ok());
  REQUIRE(same->has_value());
  CHECK((*same)->info.namespace_id == 0);
}

TEST_CASE("sqlite store: list filters by arch, driver, namespace and key id prefix") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto image = make_image(1, 64);
  put_ok(*store, make_put(make_key(1, "sm_90"), image, 0));
  put_ok(*store, make_put(make_key(2, "sm_90a"), image, 0));
  put_ok(*store, make_put(make_key(3, "sm_90", 12080), image, 1000));
  put_ok(*store, make_put(make_key(4, "sm_100f", 13000, "580.65.06"), image, 1000));
  const auto own_b = put_ok(*store, make_put(make_key(5, "sm_90"), image, 2000));
  const Visibility trusted{0, true};

  auto count = [&](ListQuery query, Visibility who) { return list_all(*store, std::move(query), who).size(); };
  ListQuery query;
  CHECK(count(query, trusted) == 5);
  CHECK(count(query, Visibility{1000, false}) == 4);

  query = {};
  query.arch = "sm_90";
  CHECK(count(query, trusted) == 3);
  CHECK(count(query, Visibility{1000, false}) == 2);
  query = {};
  query.driver_api = 12080;
  CHECK(count(query, trusted) == 1);
  query = {};
  query.driver_build = "580.65.06";
  CHECK(count(query, trusted) == 1);
  query = {};
  query.arch = "sm_90";
  query.driver_api = 13000;
  query.driver_build = "580.159.04";
  CHECK(count(query, trusted) == 2);

  query = {};
  query.namespace_id = 1000;
  CHECK(count(query, trusted) == 2);
  CHECK(count(query, Visibility{1000, false}) == 2);
  CHECK(count(query, Visibility{2000, false}) == 0);  // a filter never widens visibility
  query.namespace_id = 0;
  CHECK(count(query, Visibility{2000, false}) == 2);

  query = {};
  query.key_id_prefix = proto::to_hex(own_b).substr(0, 5);
  auto listed = list_all(*store, query, trusted);
  REQUIRE(!listed.empty());
  for (const auto& info : listed) CHECK(proto::to_hex(info.key_id).substr(0, 5) == query.key_id_prefix);
  CHECK(std::any_of(listed.begin(), listed.end(), [&](const auto& info) { return info.key_id == own_b; }));
  query.key_id_prefix = proto::to_hex(own_b);
  CHECK(count(query, trusted) == 1);
}

TEST_CASE("sqlite store: list pages through every entry in key id order with the cursor") {
  StoreDir dir;
  auto store = open_store(dir);
  std::set<std::pair<proto::Digest256, std::uint32_t>> expected;
  for (int i = 0; i < 40; ++i) {
    const std::uint32_t ns = i % 3 == 0 ? 0 : 1000;
    expected.emplace(put_ok(*store, make_put(make_key(i), make_image(i, 32), ns)), ns);
    if (i % 5 == 0) expected.emplace(put_ok(*store, make_put(make_key(i), make_image(i, 32), 2000)), 2000);
  }

  for (std::uint32_t limit : {1u, 7u, 1000u}) {
    INFO("limit " << limit);
    ListQuery query;
    query.limit = limit;
    auto all = list_all(*store, query, Visibility{0, true});
    REQUIRE(all.size() == expected.size());
    std::vector<std::pair<proto::Digest256, std::uint32_t>> seen;
    for (const auto& info : all) seen.emplace_back(info.key_id, info.namespace_id);
    CHECK(std::is_sorted(seen.begin(), seen.end()));
    CHECK(std::set(seen.begin(), seen.end()) == expected);
  }

  // Paging within one namespace, where the same key ids also exist in others.
  ListQuery query;
  query.limit = 3;
  query.namespace_id = 2000;
  auto own = list_all(*store, query, Visibility{2000, false});
  CHECK(own.size() == 8);
  for (const auto& info : own) CHECK(info.namespace_id == 2000);

  // Entries added behind the cursor do not appear, those ahead of it do.
  query = {};
  query.limit = 10;
  auto first = store->list(query, Visibility{0, true});
  REQUIRE(first.ok());
  REQUIRE_FALSE(first->next_cursor.empty());
  query.cursor = first->next_cursor;
  const auto& last = first->entries.back();
  const auto cursor_position = std::pair(last.key_id, last.namespace_id);
  std::size_t added_ahead = 0;
  for (int i = 100; i < 120; ++i) {
    if (std::pair(put_ok(*store, make_put(make_key(i), make_image(i, 32))), 0u) > cursor_position) ++added_ahead;
  }
  REQUIRE(added_ahead > 0);
  REQUIRE(added_ahead < 20);
  auto rest = list_all(*store, query, Visibility{0, true});
  CHECK(first->entries.size() + rest.size() == expected.size() + added_ahead);
  CHECK(cursor_position < std::pair(rest.front().key_id, rest.front().namespace_id));
}

TEST_CASE("sqlite store: a list cursor or limit the store did not hand out is invalid") {
  StoreDir dir;
  auto store = open_store(dir);
  put_ok(*store, make_put(make_key(1), make_image(1, 8)));
  auto rejects = [&](ListQuery query) {
    auto page = store->list(query, Visibility{});
    REQUIRE_FALSE(page.ok());
    CHECK(page.error().code == ErrorCode::invalid_argument);
  };
  ListQuery query;
  query.cursor = "garbage";
  rejects(query);
  query.cursor = std::string(48, '*');
  rejects(query);
  query.cursor = std::string(49, 'A');
  rejects(query);
  query.cursor = proto::to_hex(proto::key_id(make_key(1))) + ":0";
  rejects(query);
  query = {};
  query.limit = 0;
  rejects(query);
  query.limit = proto::k_max_list_limit + 1;
  rejects(query);
  query = {};
  query.key_id_prefix = "xyz";
  rejects(query);
}

TEST_CASE("sqlite store: an untrusted caller removes only its own entries, a trusted one any") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto image = make_image(1, 128);
  const auto shared = put_ok(*store, make_put(make_key(1), image, 0));
  const auto mine = put_ok(*store, make_put(make_key(2), image, 1000));
  const auto theirs = put_ok(*store, make_put(make_key(3), image, 2000));
  const Visibility me{1000, false};
  auto prefix = [](const proto::Digest256& id) { return proto::to_hex(id).substr(0, 16); };

  CHECK(store->remove(prefix(shared), me).value() == 0);
  CHECK(store->remove(prefix(theirs), me).value() == 0);
  CHECK(store->remove(prefix(shared), Visibility{0, false}).value() == 0);  // untrusted never owns shared
  CHECK(store->totals()->entries == 3);

  CHECK(store->remove(prefix(mine), me).value() == 1);
  CHECK_FALSE(lookup_ok(*store, mine, me).has_value());
  CHECK(store->remove(prefix(mine), me).value() == 0);

  // Trusted: every namespace, including both copies of one key id.
  put_ok(*store, make_put(make_key(1), image, 2000));
  CHECK(store->remove(prefix(shared), Visibility{0, true}).value() == 2);
  CHECK(store->remove(prefix(theirs), Visibility{0, true}).value() == 1);
  CHECK(store->totals()->entries == 0);
  CHECK(ExternalDb(dir.db()).text("SELECT COUNT(*) FROM blobs") == "0");

  auto bad = store->remove("abc", Visibility{0, true});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == ErrorCode::invalid_argument);
}

TEST_CASE("sqlite store: totals stay exact through put, replace and remove") {
  StoreDir dir;
  auto store = open_store(dir);
  auto totals = [&] {
    auto t = store->totals();
    REQUIRE(t.ok());
    return *t;
  };
  CHECK(totals().entries == 0);
  CHECK(totals().bytes_raw == 0);

  const auto a = put_ok(*store, make_put(make_key(1), make_image(1, 1000)));
  put_ok(*store, make_put(make_key(2), make_image(2, 2500), 1000));
  CHECK(totals().entries == 2);
  CHECK(totals().bytes_raw == 3500);
  CHECK(totals().bytes_stored == 3500);

  put_ok(*store, make_put(make_key(1), make_image(3, 400)));  // replace 1000 bytes by 400
  CHECK(totals().entries == 2);
  CHECK(totals().bytes_raw == 2900);
  CHECK(totals().bytes_stored == 2900);

  REQUIRE(store->remove(proto::to_hex(a), Visibility{0, true}).value() == 1);
  CHECK(totals().entries == 1);
  CHECK(totals().bytes_raw == 2500);

  // The triggers agree with a full scan.
  ExternalDb external(dir.db());
  CHECK(external.text("SELECT COUNT(*) || ',' || SUM(raw_size) || ',' || SUM(stored_size) FROM entries") ==
        "1,2500,2500");
  CHECK(totals().corrupt_entries == 0);
}

TEST_CASE("sqlite store: lookups count hits in memory and flush_usage writes them") {
  StoreDir dir;
  FakeClock clock;
  auto store = open_store(dir, clock);
  const std::int64_t created = clock.now->load();
  const auto key_id = put_ok(*store, make_put(make_key(1), make_image(1, 256)));
  const auto other = put_ok(*store, make_put(make_key(2), make_image(2, 256), 1000));
  ExternalDb external(dir.db());
  const std::string hex = proto::to_hex(key_id);
  auto column = [&](const char* name, const proto::Digest256& id) {
    return external.text(std::string("SELECT ") + name + " FROM entries WHERE hex(key_id) = upper('" +
                         proto::to_hex(id) + "')");
  };

  for (int i = 0; i < 5; ++i) {
    *clock.now += 1000;
    REQUIRE(lookup_ok(*store, key_id).has_value());
  }
  REQUIRE(testing::lookup_prefix(*store, hex.substr(0, 10), Visibility{}).value().has_value());
  REQUIRE(lookup_ok(*store, other, Visibility{1000, false}).has_value());
  // Lookups do not write.
  CHECK(column("hits", key_id) == "0");
  CHECK(column("last_used_at_ms", key_id) == std::to_string(created));

  REQUIRE(store->flush_usage().ok());
  CHECK(column("hits", key_id) == "6");
  CHECK(column("last_used_at_ms", key_id) == std::to_string(created + 5000));
  CHECK(column("hits", other) == "1");

  // A second flush adds to the count; an empty one changes nothing.
  REQUIRE(lookup_ok(*store, key_id).has_value());
  REQUIRE(store->flush_usage().ok());
  REQUIRE(store->flush_usage().ok());
  CHECK(column("hits", key_id) == "7");
  CHECK(lookup_ok(*store, key_id)->info.hits == 7);

  // Usage of an entry removed before the flush is dropped without an error.
  REQUIRE(store->remove(proto::to_hex(other), Visibility{0, true}).value() == 1);
  CHECK(store->flush_usage().ok());
}

TEST_CASE("sqlite store: hits recorded before closing are written by the destructor") {
  StoreDir dir;
  proto::Digest256 key_id;
  {
    auto store = open_store(dir);
    key_id = put_ok(*store, make_put(make_key(1), make_image(1, 16)));
    REQUIRE(lookup_ok(*store, key_id).has_value());
    REQUIRE(lookup_ok(*store, key_id).has_value());
  }
  CHECK(ExternalDb(dir.db()).text("SELECT hits FROM entries") == "2");
}

TEST_CASE("sqlite store: a corrupt blob is a miss and is deleted") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto image = make_image(9, 10'000);
  const auto key_id = put_ok(*store, make_put(make_key(9), image));
  const auto healthy = put_ok(*store, make_put(make_key(10), image));

  SECTION("one flipped byte") {
    ExternalDb external(dir.db());
    const std::int64_t rowid = std::stoll(external.text("SELECT id FROM entries WHERE hex(key_id) = upper('" +
                                                        proto::to_hex(key_id) + "') AND namespace = 0"));
    sqlite3_blob* blob = nullptr;
    REQUIRE(sqlite3_blob_open(external.handle(), "main", "blobs", "data", rowid, 1, &blob) == SQLITE_OK);
    const std::uint8_t flipped = static_cast<std::uint8_t>(image[4999] ^ 0x01);
    CHECK(sqlite3_blob_write(blob, &flipped, 1, 4999) == SQLITE_OK);
    sqlite3_blob_close(blob);
  }
  SECTION("a truncated image") {
    ExternalDb(dir.db()).exec(
        "UPDATE blobs SET data = substr(data, 1, 100) WHERE entry_id = "
        "(SELECT id FROM entries WHERE hex(key_id) = upper('" +
        proto::to_hex(key_id) + "'))");
  }
  SECTION("a missing image") {
    ExternalDb external(dir.db());
    external.exec("DELETE FROM blobs WHERE entry_id = (SELECT id FROM entries WHERE hex(key_id) = upper('" +
                  proto::to_hex(key_id) + "'))");
  }

  CHECK_FALSE(lookup_ok(*store, key_id).has_value());
  auto totals = store->totals();
  REQUIRE(totals.ok());
  CHECK(totals->corrupt_entries == 1);
  CHECK(totals->entries == 1);
  CHECK(ExternalDb(dir.db()).text("SELECT COUNT(*) FROM entries WHERE hex(key_id) = upper('" + proto::to_hex(key_id) +
                                  "')") == "0");
  // Still a miss, and not counted twice; the other entry is untouched.
  CHECK_FALSE(lookup_ok(*store, key_id).has_value());
  CHECK(store->totals()->corrupt_entries == 1);
  auto other = lookup_ok(*store, healthy);
  REQUIRE(other.has_value());
  CHECK(std::ranges::equal(*other->image, image));
  // A fresh PUT of the key works again.
  put_ok(*store, make_put(make_key(9), image));
  CHECK(lookup_ok(*store, key_id).has_value());
}

TEST_CASE("sqlite store: a new database runs in WAL mode with 16 KiB pages") {
  StoreDir dir;
  auto store = open_store(dir);
  ExternalDb external(dir.db());
  CHECK(external.text("PRAGMA journal_mode") == "wal");
  CHECK(external.text("PRAGMA page_size") == "16384");
  CHECK(std::filesystem::exists(dir.path() / "store.db-wal"));
}

TEST_CASE("sqlite store: opening fails clearly on a file that is not a database") {
  StoreDir dir;
  {
    std::ofstream garbage(dir.db(), std::ios::binary);
    for (int i = 0; i < 1000; ++i) garbage << "this is not an SQLite database, just text. ";
  }
  SqliteStoreOptions options;
  options.path = dir.db();
  auto store = SqliteStore::open(options);
  REQUIRE_FALSE(store.ok());
  CHECK(store.error().code == ErrorCode::corrupt);
  CHECK_THAT(store.error().message, Catch::Contains(dir.db().string()));

  options.path = dir.path() / "missing-dir" / "store.db";
  auto missing = SqliteStore::open(options);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::io);
}

TEST_CASE("sqlite db: a full database is reported as no_space with what was being done") {
  StoreDir dir;
  auto db = daemon::store::SqliteDb::open(dir.db(), daemon::store::OpenMode::read_write_create);
  REQUIRE(db.ok());
  REQUIRE(daemon::store::apply_pragmas(*db, daemon::store::ConnectionRole::writer, {}).ok());
  REQUIRE(daemon::store::migrate(*db).ok());
  REQUIRE(db->exec("PRAGMA max_page_count = 30", "limiting the file").ok());
  auto stmt = db->statement("INSERT INTO meta (key, value) VALUES ('big', ?)");
  REQUIRE(stmt.ok());
  const std::string big(1 << 20, 'x');
  (*stmt)->bind_text(1, big);
  auto run = (*stmt)->run("storing a large value");
  REQUIRE_FALSE(run.ok());
  CHECK(run.error().code == ErrorCode::no_space);
  CHECK_THAT(run.error().message, Catch::Contains("storing a large value"));
  CHECK_THAT(run.error().message, Catch::Contains("full"));
}

TEST_CASE("sqlite db: SQLite result codes map to the store's error codes") {
  using daemon::store::map_sqlite_code;
  CHECK(map_sqlite_code(SQLITE_FULL) == ErrorCode::no_space);
  CHECK(map_sqlite_code(SQLITE_CORRUPT) == ErrorCode::corrupt);
  CHECK(map_sqlite_code(SQLITE_CORRUPT_INDEX) == ErrorCode::corrupt);
  CHECK(map_sqlite_code(SQLITE_NOTADB) == ErrorCode::corrupt);
  CHECK(map_sqlite_code(SQLITE_BUSY) == ErrorCode::unavailable);
  CHECK(map_sqlite_code(SQLITE_BUSY_SNAPSHOT) == ErrorCode::unavailable);
  CHECK(map_sqlite_code(SQLITE_TOOBIG) == ErrorCode::too_large);
  CHECK(map_sqlite_code(SQLITE_IOERR_WRITE) == ErrorCode::io);
  CHECK(map_sqlite_code(SQLITE_CONSTRAINT_CHECK) == ErrorCode::internal);
  CHECK(map_sqlite_code(SQLITE_ERROR) == ErrorCode::internal);
}

TEST_CASE("sqlite store: concurrent readers and writers see no errors and no mismatched bytes") {
  StoreDir dir;
  auto store = open_store(dir, FakeClock{}, 3);  // fewer readers than reading threads: the pool must wait
  constexpr int k_keys = 24;
  constexpr int k_writers = 2;
  constexpr int k_readers = 6;
  constexpr int k_ops = 400;

  // An image is a pure function of (key, generation), and the producer names the generation, so a
  // reader can tell exactly which bytes it must have received.
  auto image_for = [](int key, int generation) {
    return make_image(static_cast<std::uint64_t>(key) * 1'000'003u + static_cast<std::uint64_t>(generation),
                      static_cast<std::size_t>(512 + (key * 37 + generation * 101) % 40'000));
  };
  std::vector<proto::Digest256> ids;
  for (int key = 0; key < k_keys; ++key) {
    const auto image = image_for(key, 0);
    ids.push_back(put_ok(*store, make_put(make_key(key), image, 0, "gen 0")));
  }
  // Never replaced (a replacement starts hits at 0), so every lookup of it must end up counted.
  const auto stable_image = image_for(k_keys, 0);
  const auto stable = put_ok(*store, make_put(make_key(k_keys), stable_image, 1000, "gen 0"));

  std::atomic<int> errors{0};
  std::atomic<int> mismatches{0};
  std::atomic<int> stable_hits{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < k_writers; ++w) {
    threads.emplace_back([&, w] {
      for (int op = 0; op < k_ops; ++op) {
        const int key = (op * 7 + w) % k_keys;
        const int generation = op * k_writers + w + 1;
        const auto image = image_for(key, generation);
        if (!store->put(make_put(make_key(key), image, 0, "gen " + std::to_string(generation))).ok()) ++errors;
        if (op % 50 == 0 && !store->flush_usage().ok()) ++errors;
      }
    });
  }
  for (int r = 0; r < k_readers; ++r) {
    threads.emplace_back([&, r] {
      for (int op = 0; op < k_ops; ++op) {
        const int key = (op * 5 + r) % k_keys;
        if (op % 9 == 0) {
          auto found = testing::lookup_key_id(*store, stable, Visibility{1000, false});
          if (!found.ok() || !found->has_value()) {
            ++errors;
          } else {
            ++stable_hits;
            if (!std::ranges::equal(*(*found)->image, stable_image)) ++mismatches;
          }
          continue;
        }
        if (op % 40 == 1) {
          ListQuery query;
          query.limit = 10;
          auto page = store->list(query, Visibility{});
          if (!page.ok() || page->entries.size() != 10) ++errors;
          if (!store->totals().ok()) ++errors;
          continue;
        }
        auto found = testing::lookup_key_id(*store, ids[static_cast<std::size_t>(key)], Visibility{});
        if (!found.ok() || !found->has_value()) {
          ++errors;
          continue;
        }
        const auto& entry = **found;
        const int generation = std::stoi(entry.info.producer.substr(4));
        const bool same = std::ranges::equal(*entry.image, image_for(key, generation));
        if (!same || entry.info.raw_size != entry.image->size()) ++mismatches;
      }
    });
  }
  for (auto& thread : threads) thread.join();

  CHECK(errors == 0);
  CHECK(mismatches == 0);
  REQUIRE(store->flush_usage().ok());
  auto totals = store->totals();
  REQUIRE(totals.ok());
  CHECK(totals->entries == k_keys + 1);
  CHECK(totals->corrupt_entries == 0);
  CHECK(ExternalDb(dir.db()).text("SELECT hits FROM entries WHERE namespace = 1000") ==
        std::to_string(stable_hits.load()));
}

// --- the hot image cache (daemon/store/hot_image_cache.hpp) inside the store ---

namespace {

std::unique_ptr<SqliteStore> open_store_with_hot_cache(const StoreDir& dir, std::uint64_t hot_cache_bytes,
                                                       unsigned readers = 4) {
  SqliteStoreOptions options;
  options.path = dir.db();
  options.reader_count = readers;
  options.hot_cache_bytes = hot_cache_bytes;
  auto store = SqliteStore::open(options);
  INFO((store ? std::string() : store.error().message));
  REQUIRE(store.ok());
  return std::move(*store);
}

daemon::store::Totals totals_ok(SqliteStore& store) {
  auto totals = store.totals();
  INFO((totals ? std::string() : totals.error().message));
  REQUIRE(totals.ok());
  return *totals;
}

constexpr std::uint64_t k_entry_overhead = daemon::store::HotImageCache::k_entry_overhead_bytes;

// Rewrites a row's checksum behind the store's back: a row whose image has another image's
// checksum and size is what a crafted XXH3 collision would look like.
void set_row_checksum(ExternalDb& external, std::int64_t row_id, const proto::Checksum128& checksum) {
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(external.handle(), "UPDATE entries SET checksum = ?1 WHERE id = ?2", -1, &stmt, nullptr) ==
          SQLITE_OK);
  sqlite3_bind_blob(stmt, 1, checksum.bytes.data(), static_cast<int>(checksum.bytes.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(stmt, 2, row_id);
  CHECK(sqlite3_step(stmt) == SQLITE_DONE);
  CHECK(sqlite3_changes(external.handle()) == 1);
  sqlite3_finalize(stmt);
}

}  // namespace

TEST_CASE("sqlite store: a second lookup of an entry is served from the hot image cache and still counted as a hit") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto image = make_image(1, 200'000);
  const auto key_id = put_ok(*store, make_put(make_key(1), image));

  auto first = lookup_ok(*store, key_id);
  REQUIRE(first.has_value());
  auto totals = totals_ok(*store);
  CHECK(totals.hot_cache_misses == 1);
  CHECK(totals.hot_cache_hits == 0);
  CHECK(totals.hot_cache_entries == 1);
  CHECK(totals.hot_cache_bytes == image.size() + k_entry_overhead);

  auto second = lookup_ok(*store, key_id);
  REQUIRE(second.has_value());
  CHECK(second->image == first->image);  // the very buffer: no second read from SQLite
  CHECK(std::ranges::equal(*second->image, image));
  CHECK(second->info.checksum == proto::xxh3_128(image));
  totals = totals_ok(*store);
  CHECK(totals.hot_cache_hits == 1);
  CHECK(totals.hot_cache_misses == 1);

  REQUIRE(store->flush_usage().ok());
  CHECK(ExternalDb(dir.db()).text("SELECT hits FROM entries") == "2");
}

TEST_CASE("sqlite store: a PUT that replaces a cached entry serves the new image on the next lookup") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto key = make_key(2);
  const auto old_image = make_image(1, 50'000);
  const auto key_id = put_ok(*store, make_put(key, old_image));
  REQUIRE(lookup_ok(*store, key_id).has_value());
  REQUIRE(totals_ok(*store).hot_cache_entries == 1);

  SECTION("with an image of another size") {
    const auto new_image = make_image(2, 60'000);
    put_ok(*store, make_put(key, new_image));
    auto found = lookup_ok(*store, key_id);
    REQUIRE(found.has_value());
    CHECK(std::ranges::equal(*found->image, new_image));
  }
  SECTION("with an image of the same size") {
    const auto new_image = make_image(3, 50'000);
    put_ok(*store, make_put(key, new_image));
    auto found = lookup_ok(*store, key_id);
    REQUIRE(found.has_value());
    CHECK(std::ranges::equal(*found->image, new_image));
  }
  CHECK(totals_ok(*store).hot_cache_hits == 0);
  CHECK(totals_ok(*store).hot_cache_entries == 1);
}

TEST_CASE("sqlite store: a PUT that replaces a cached entry drops the old image even if the new row has its checksum") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto key = make_key(2);
  const auto old_image = make_image(1, 50'000);
  const auto key_id = put_ok(*store, make_put(key, old_image));
  REQUIRE(lookup_ok(*store, key_id).has_value());

  put_ok(*store, make_put(key, make_image(3, 50'000)));
  ExternalDb external(dir.db());
  set_row_checksum(external, std::stoll(external.text("SELECT id FROM entries")), proto::xxh3_128(old_image));
  // The new blob fails the checksum its row claims: a corrupt entry, a miss; never the old bytes.
  CHECK_FALSE(lookup_ok(*store, key_id).has_value());
  CHECK(totals_ok(*store).corrupt_entries == 1);
  CHECK(totals_ok(*store).hot_cache_hits == 0);
  CHECK(totals_ok(*store).hot_cache_entries == 0);
}

TEST_CASE("sqlite store: REMOVE and a failure report drop the entry's cached image and the next lookup misses") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto key = make_key(3);
  const auto image = make_image(3, 30'000);
  const auto key_id = put_ok(*store, make_put(key, image, 1000));
  const Visibility uid_1000{1000, false};
  REQUIRE(lookup_ok(*store, key_id, uid_1000).has_value());
  REQUIRE(totals_ok(*store).hot_cache_entries == 1);

  SECTION("REMOVE") { REQUIRE(store->remove(proto::to_hex(key_id), uid_1000).value() == 1); }
  SECTION("a failure report quarantines it") {
    daemon::store::FailureReport report;
    report.cu_result = 209;
    report.reporter_uid = 1000;
    auto outcome = store->report_failure(key_id, uid_1000, report);
    REQUIRE(outcome.ok());
    REQUIRE(outcome->has_value());
    REQUIRE((*outcome)->verdict == daemon::store::ReportVerdict::quarantined);
  }
  CHECK(totals_ok(*store).hot_cache_entries == 0);
  CHECK(totals_ok(*store).hot_cache_bytes == 0);
  CHECK_FALSE(lookup_ok(*store, key_id, uid_1000).has_value());

  // A PUT makes the key live again, with its new image.
  const auto rebuilt = make_image(4, 30'000);
  put_ok(*store, make_put(key, rebuilt, 1000));
  auto found = lookup_ok(*store, key_id, uid_1000);
  REQUIRE(found.has_value());
  CHECK(std::ranges::equal(*found->image, rebuilt));
  CHECK(totals_ok(*store).hot_cache_hits == 0);
}

TEST_CASE("sqlite store: a row id reused by another namespace's entry never serves the old image") {
  StoreDir dir;
  auto store = open_store(dir);
  const Visibility uid_1000{1000, false};
  const Visibility uid_2000{2000, false};
  put_ok(*store, make_put(make_key(1), make_image(1, 100), 1000));  // not the newest row: stays
  const auto victim_image = make_image(10, 20'000);
  const auto victim = put_ok(*store, make_put(make_key(10), victim_image, 1000));
  REQUIRE(lookup_ok(*store, victim, uid_1000).has_value());  // cached under its row id
  ExternalDb external(dir.db());
  const std::string victim_row = external.text("SELECT MAX(id) FROM entries");

  REQUIRE(store->remove(proto::to_hex(victim), uid_1000).value() == 1);
  // SQLite gives the next row the largest id plus one: the id the removed entry had.
  const auto other_image = make_image(20, 20'000);
  const auto other = put_ok(*store, make_put(make_key(20), other_image, 2000));
  REQUIRE(external.text("SELECT id FROM entries WHERE namespace = 2000") == victim_row);

  SECTION("with its own checksum it is served its own image") {
    auto found = lookup_ok(*store, other, uid_2000);
    REQUIRE(found.has_value());
    CHECK(std::ranges::equal(*found->image, other_image));
  }
  SECTION(
      "with a row carrying the old image's checksum, as a crafted XXH3 collision would, it is not served the old image") {
    set_row_checksum(external, std::stoll(victim_row), proto::xxh3_128(victim_image));

    // Its blob then fails the checksum its row claims: a corrupt entry, so a miss; never the victim's bytes.
    auto found = lookup_ok(*store, other, uid_2000);
    CHECK_FALSE(found.has_value());
    CHECK(totals_ok(*store).corrupt_entries == 1);
  }
  CHECK(totals_ok(*store).hot_cache_hits == 0);
}

TEST_CASE("sqlite store: the hot image cache stays within its budget and evicts the least recently served image") {
  StoreDir dir;
  constexpr std::size_t k_size = 100'000;
  auto store = open_store_with_hot_cache(dir, 2 * (k_size + k_entry_overhead));
  std::vector<proto::Digest256> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(put_ok(*store, make_put(make_key(i), make_image(i, k_size))));

  REQUIRE(lookup_ok(*store, ids[0]).has_value());
  REQUIRE(lookup_ok(*store, ids[1]).has_value());
  REQUIRE(lookup_ok(*store, ids[0]).has_value());  // a hit: ids[1] is now the least recently served
  REQUIRE(lookup_ok(*store, ids[2]).has_value());  // evicts ids[1]
  auto totals = totals_ok(*store);
  CHECK(totals.hot_cache_entries == 2);
  CHECK(totals.hot_cache_bytes == 2 * (k_size + k_entry_overhead));
  CHECK(totals.hot_cache_hits == 1);
  CHECK(totals.hot_cache_misses == 3);

  REQUIRE(lookup_ok(*store, ids[0]).has_value());
  REQUIRE(lookup_ok(*store, ids[2]).has_value());
  CHECK(totals_ok(*store).hot_cache_hits == 3);
  REQUIRE(lookup_ok(*store, ids[1]).has_value());
  CHECK(totals_ok(*store).hot_cache_misses == 4);

  SECTION("an image bigger than the budget is served but not cached") {
    const auto big = make_image(9, 2 * k_size + 2 * k_entry_overhead);  // charged one overhead more than the budget
    const auto big_id = put_ok(*store, make_put(make_key(9), big));
    for (int i = 0; i < 2; ++i) {
      auto found = lookup_ok(*store, big_id);
      REQUIRE(found.has_value());
      CHECK(std::ranges::equal(*found->image, big));
    }
    CHECK(totals_ok(*store).hot_cache_hits == 3);
    CHECK(totals_ok(*store).hot_cache_misses == 6);
    CHECK(totals_ok(*store).hot_cache_bytes <= 2 * (k_size + k_entry_overhead));
  }
}

TEST_CASE("sqlite store: hot_cache_bytes 0 reads every image from the database") {
  StoreDir dir;
  auto store = open_store_with_hot_cache(dir, 0);
  const auto image = make_image(1, 10'000);
  const auto key_id = put_ok(*store, make_put(make_key(1), image));
  auto first = lookup_ok(*store, key_id);
  auto second = lookup_ok(*store, key_id);
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  CHECK(first->image != second->image);  // two reads, two buffers
  CHECK(std::ranges::equal(*second->image, image));
  const auto totals = totals_ok(*store);
  CHECK(totals.hot_cache_hits == 0);
  CHECK(totals.hot_cache_entries == 0);
  CHECK(totals.hot_cache_bytes == 0);
}

TEST_CASE(
    "sqlite store: concurrent lookups, replacing PUTs, REMOVEs and failure reports never serve stale bytes from the hot cache") {
  StoreDir dir;
  constexpr int k_keys = 12;
  constexpr int k_ops = 300;
  // Room for about half the images, so that eviction runs alongside everything else.
  auto store = open_store_with_hot_cache(dir, 6 * (20'000 + k_entry_overhead), 3);
  auto image_for = [](int key, int generation) {
    return make_image(static_cast<std::uint64_t>(key) * 1'000'003u + static_cast<std::uint64_t>(generation),
                      static_cast<std::size_t>(2000 + (key * 37 + generation * 101) % 18'000));
  };
  std::vector<proto::Digest256> ids;
  for (int key = 0; key < k_keys; ++key)
    ids.push_back(put_ok(*store, make_put(make_key(key), image_for(key, 0), 0, "gen 0")));

  std::atomic<int> errors{0};
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  threads.emplace_back([&] {  // the writer thread: one write at a time, as in the daemon
    for (int op = 0; op < k_ops; ++op) {
      const int key = (op * 5) % k_keys;
      const int generation = op + 1;
      if (op % 7 == 3) {
        if (!store->remove(proto::to_hex(ids[static_cast<std::size_t>(key)]), Visibility{0, true}).ok()) ++errors;
      } else if (op % 11 == 5) {
        if (!store->report_failure(ids[static_cast<std::size_t>(key)], Visibility{0, true}, {}).ok()) ++errors;
      } else if (!store
                      ->put(make_put(make_key(key), image_for(key, generation), 0, "gen " + std::to_string(generation)))
                      .ok()) {
        ++errors;
      }
    }
  });
  for (int r = 0; r < 4; ++r) {
    threads.emplace_back([&, r] {
      for (int op = 0; op < k_ops * 2; ++op) {
        const int key = (op * 3 + r) % k_keys;
        auto found = testing::lookup_key_id(*store, ids[static_cast<std::size_t>(key)], Visibility{});
        if (!found.ok()) {
          ++errors;
          continue;
        }
        if (!found->has_value()) continue;  // removed or quarantined just now
        const auto& entry = **found;
        // The row names the generation; the bytes must be exactly that generation's.
        const int generation = std::stoi(entry.info.producer.substr(4));
        const bool same = std::ranges::equal(*entry.image, image_for(key, generation));
        if (!same || entry.info.checksum != proto::xxh3_128(*entry.image)) ++mismatches;
      }
    });
  }
  for (auto& thread : threads) thread.join();

  CHECK(errors == 0);
  CHECK(mismatches == 0);
  const auto totals = totals_ok(*store);
  CHECK(totals.corrupt_entries == 0);
  CHECK(totals.hot_cache_bytes <= 6 * (20'000 + k_entry_overhead));
  CHECK(totals.hot_cache_hits + totals.hot_cache_misses > 0);
}

namespace {

proto::Checksum128 fast_of(int seed) { return proto::xxh3_128(proto::as_bytes("ptx source " + std::to_string(seed))); }

PutInput make_fast_put(const proto::KeyFields& key, const std::vector<std::uint8_t>& image, std::uint32_t ns,
                       const proto::Checksum128& content_fast) {
  PutInput input = make_put(key, image, ns);
  input.content_fast = content_fast;
  return input;
}

std::optional<daemon::store::Hit> lookup_fast_ok(SqliteStore& store, const proto::FastKey& fast, Visibility who) {
  auto found = testing::lookup_fast_key_id(store, proto::fast_key_id(fast), who);
  INFO((found ? std::string() : found.error().message));
  REQUIRE(found.ok());
  return std::move(*found);
}

}  // namespace

TEST_CASE("sqlite store: a fast key finds the entry put with its content_fast, shared first, never another uid's") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto key = make_key(60);
  const proto::FastKey fast = proto::fast_key_of(key, fast_of(60));
  const auto own_image = make_image(60, 700);
  put_ok(*store, make_fast_put(key, own_image, 1000, fast.content_fast));

  auto own = lookup_fast_ok(*store, fast, Visibility{1000, false});
  REQUIRE(own.has_value());
  CHECK(own->info.key == key);                    // the full key, content digest included, for the client to check
  CHECK(own->content_fast == fast.content_fast);  // so a hit can be stored again as it was
  CHECK(std::ranges::equal(*own->image, own_image));
  CHECK_FALSE(lookup_fast_ok(*store, fast, Visibility{2000, false}).has_value());
  CHECK_FALSE(lookup_fast_ok(*store, fast, Visibility{}).has_value());

  const auto shared_image = make_image(61, 800);
  put_ok(*store, make_fast_put(key, shared_image, 0, fast.content_fast));
  auto served = lookup_fast_ok(*store, fast, Visibility{1000, false});
  REQUIRE(served.has_value());
  CHECK(served->info.namespace_id == 0);
  CHECK(std::ranges::equal(*served->image, shared_image));

  // Any other field of the fast key misses.
  proto::FastKey other_arch = fast;
  other_arch.arch = "sm_90a";
  CHECK_FALSE(lookup_fast_ok(*store, other_arch, Visibility{1000, false}).has_value());
  proto::FastKey other_content = fast;
  other_content.content_fast = fast_of(61);
  CHECK_FALSE(lookup_fast_ok(*store, other_content, Visibility{1000, false}).has_value());

  // A fast hit is a hit of the entry: counted against its key id.
  REQUIRE(store->flush_usage().ok());
  auto again = lookup_ok(*store, proto::key_id(key), Visibility{1000, false});
  REQUIRE(again.has_value());
  CHECK(again->info.hits == 1);
}

TEST_CASE("sqlite store: a reported or quarantined entry is not found by its fast key, the caller's own live one is") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto key = make_key(62);
  const proto::Checksum128 content_fast = fast_of(62);
  put_ok(*store, make_fast_put(key, make_image(62, 300), 0, content_fast));
  const auto own_image = make_image(63, 300);
  put_ok(*store, make_fast_put(key, own_image, 1000, content_fast));
  auto reported = store->report_failure(proto::key_id(key), Visibility{1000, false},
                                        daemon::store::FailureReport{200, proto::FailureStage::load, "", 1000});
  REQUIRE(reported.ok());
  REQUIRE(reported->has_value());
  CHECK((*reported)->namespace_id == 0);

  auto served = lookup_fast_ok(*store, proto::fast_key_of(key, content_fast), Visibility{1000, false});
  REQUIRE(served.has_value());
  CHECK(served->info.namespace_id == 1000);
  CHECK(std::ranges::equal(*served->image, own_image));
  // Hidden from its reporter only (quarantine.hpp) until a trusted report quarantines it.
  CHECK(lookup_fast_ok(*store, proto::fast_key_of(key, content_fast), Visibility{2000, false}).has_value());
  REQUIRE(store
              ->report_failure(proto::key_id(key), Visibility{0, true},
                               daemon::store::FailureReport{200, proto::FailureStage::load, "", 0})
              .ok());
  CHECK_FALSE(lookup_fast_ok(*store, proto::fast_key_of(key, content_fast), Visibility{2000, false}).has_value());
}

TEST_CASE("sqlite store: every entry put is found by its fast key, and a replacement by the new one") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto key = make_key(64);
  put_ok(*store, make_put(key, make_image(64, 200), 0));
  const proto::FastKey fast = proto::fast_key_of(key, content_fast_of(key));
  CHECK(lookup_fast_ok(*store, fast, Visibility{}).has_value());

  const auto replacement = make_image(66, 250);
  put_ok(*store, make_fast_put(key, replacement, 0, fast_of(64)));
  CHECK_FALSE(lookup_fast_ok(*store, fast, Visibility{}).has_value());
  auto served = lookup_fast_ok(*store, proto::fast_key_of(key, fast_of(64)), Visibility{});
  REQUIRE(served.has_value());
  CHECK(std::ranges::equal(*served->image, replacement));
}

TEST_CASE("sqlite store: the file refuses an entry without a fast key, whoever writes it (schema 7)") {
  StoreDir dir;
  auto store = open_store(dir);
  put_ok(*store, make_put(make_key(69), make_image(69, 200), 0));
  ExternalDb db(dir.db());
  char* error = nullptr;
  const int rc = sqlite3_exec(db.handle(),
                              "INSERT INTO entries (key_id, namespace, key_schema, content_digest, arch, driver_api,"
                              " driver_build, options, producer, codec, raw_size, stored_size, checksum,"
                              " created_at_ms, last_used_at_ms, hits, compile_time_us)"
                              " SELECT randomblob(32), 0, key_schema, content_digest, arch, driver_api, driver_build,"
                              " options, producer, codec, raw_size, stored_size, checksum, created_at_ms,"
                              " last_used_at_ms, 0, 0 FROM entries",
                              nullptr, nullptr, &error);
  CHECK(rc == SQLITE_CONSTRAINT);
  CHECK_THAT(std::string(error ? error : ""), Catch::Contains("fast key"));
  sqlite3_free(error);
  error = nullptr;
  CHECK(sqlite3_exec(db.handle(), "UPDATE entries SET fast_key_id = NULL", nullptr, nullptr, &error) ==
        SQLITE_CONSTRAINT);
  sqlite3_free(error);
  CHECK(db.text("SELECT COUNT(*) FROM entries WHERE fast_key_id IS NOT NULL") == "1");
}

TEST_CASE("sqlite store: two entries sharing a fast key (an XXH3 collision) offer the newest, and each keeps its key") {
  StoreDir dir;
  auto store = open_store(dir);
  // Two sources with one XXH3-128: the same fast key, different content digests and key ids.
  const auto first = make_key(67);
  const auto second = make_key(68);
  const proto::Checksum128 shared_fast = fast_of(67);
  put_ok(*store, make_fast_put(first, make_image(67, 100), 0, shared_fast));
  const auto second_image = make_image(68, 100);
  put_ok(*store, make_fast_put(second, second_image, 0, shared_fast));

  auto offered = lookup_fast_ok(*store, proto::fast_key_of(first, shared_fast), Visibility{});
  REQUIRE(offered.has_value());
  CHECK(offered->info.key == second);  // not `first`: the client sees the content digest differ
  CHECK(std::ranges::equal(*offered->image, second_image));
  auto by_key = lookup_ok(*store, proto::key_id(first));
  REQUIRE(by_key.has_value());
  CHECK(by_key->info.key == first);
}
