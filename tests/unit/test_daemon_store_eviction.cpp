// SqliteStore's capacity: eviction by PUT and GC (daemon/store/eviction.hpp), stale drivers and
// LIST --stale, against a real SQLite file in a fresh temporary directory and a fake clock, with
// eviction_policy = "lru" selected (the gdsf order: test_daemon_store_eviction_gdsf.cpp).
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <proto/digest.hpp>
#include <proto/key.hpp>

#include <daemon/store/eviction.hpp>
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

constexpr std::int64_t k_day_ms = 24 * 3'600'000LL;
constexpr std::size_t k_image_bytes = 100'000;

using testing::FakeClock;

// A store with a byte limit and a stale-driver interval, on the test's clock.
std::unique_ptr<SqliteStore> open_limited_store(const StoreDir& dir, const FakeClock& clock, std::uint64_t max_size,
                                                std::chrono::milliseconds stale_after = std::chrono::milliseconds(0)) {
  SqliteStoreOptions options;
  options.path = dir.db();
  options.reader_count = 2;
  options.clock = clock.function();
  options.max_size_bytes = max_size;
  options.stale_driver_after = stale_after;
  options.eviction_order = daemon::store::EvictionOrder::lru;
  return testing::open_store(options);
}

proto::KeyFields make_key(int seed, const std::string& driver_build = "580.159.04") {
  return testing::make_key(seed, "sm_90", 13000, driver_build);
}

std::vector<std::uint8_t> make_image(std::uint64_t seed, std::size_t size = k_image_bytes) {
  return testing::make_image(seed, size);
}

// Entries of one test: seed -> key and image, put with the clock as it is.
struct Entries {
  explicit Entries(SqliteStore& s) : store(s) {}
  SqliteStore& store;
  std::vector<proto::KeyFields> keys;
  std::vector<std::vector<std::uint8_t>> images;

  proto::Digest256 put(int seed, const std::string& driver_build = "580.159.04") {
    if (keys.size() <= static_cast<std::size_t>(seed)) {
      keys.resize(static_cast<std::size_t>(seed) + 1);
      images.resize(static_cast<std::size_t>(seed) + 1);
    }
    keys[static_cast<std::size_t>(seed)] = make_key(seed, driver_build);
    images[static_cast<std::size_t>(seed)] = make_image(static_cast<std::uint64_t>(seed));
    PutInput input;
    input.key = keys[static_cast<std::size_t>(seed)];
    input.producer = "nvJitLink 13.0";
    input.image = images[static_cast<std::size_t>(seed)];
    auto put = store.put(input);
    INFO((put ? std::string() : put.error().message));
    REQUIRE(put.ok());
    return put->key_id;
  }
  bool present(int seed) {
    auto found =
        testing::lookup_key_id(store, proto::key_id(keys[static_cast<std::size_t>(seed)]), Visibility{0, true});
    REQUIRE(found.ok());
    return found->has_value();
  }
};

daemon::store::Totals totals_of(SqliteStore& store) {
  auto totals = store.totals();
  REQUIRE(totals.ok());
  return *totals;
}

}  // namespace

TEST_CASE("store eviction: the low-water mark is 90% of max_size") {
  CHECK(daemon::store::low_water_bytes(1'000'000) == 900'000);
  CHECK(daemon::store::low_water_bytes(10ull << 30) == (10ull << 30) / 10 * 9);
  CHECK(daemon::store::low_water_bytes(0) == 0);
}

TEST_CASE("store eviction: a PUT over max_size evicts the least recently used, and a hit not yet flushed counts") {
  StoreDir dir;
  FakeClock clock;
  auto store = open_limited_store(dir, clock, 10 * k_image_bytes);
  Entries entries{*store};
  for (int seed = 0; seed < 10; ++seed) {
    entries.put(seed);
    clock.advance(1000);
  }
  REQUIRE(totals_of(*store).bytes_stored == 10 * k_image_bytes);  // exactly at the limit: nothing evicted
  CHECK(totals_of(*store).evictions == 0);

  // Entry 0 is the oldest write, but it was just hit; the hit is only in memory (no flush_usage()).
  auto hit = testing::lookup_key_id(*store, proto::key_id(entries.keys[0]), Visibility{0, true});
  REQUIRE(hit.ok());
  REQUIRE(hit->has_value());
  clock.advance(1000);

  entries.put(10);  // 1.1 MB > 1 MB: evict down to 900 kB - 100 kB for the new image
  const auto totals = totals_of(*store);
  CHECK(totals.evictions == 2);
  CHECK(totals.evicted_bytes == 2 * k_image_bytes);
  CHECK(totals.bytes_stored == 9 * k_image_bytes);
  CHECK(totals.entries == 9);
  CHECK(entries.present(0));
  CHECK_FALSE(entries.present(1));
  CHECK_FALSE(entries.present(2));
  for (int seed = 3; seed <= 10; ++seed) {
    CAPTURE(seed);
    CHECK(entries.present(seed));
  }
}

TEST_CASE("store eviction: it works in batches, so the PUTs after one do not evict until the store is full again") {
  StoreDir dir;
  FakeClock clock;
  auto store = open_limited_store(dir, clock, 10 * k_image_bytes);
  Entries entries{*store};
  for (int seed = 0; seed < 11; ++seed) {
    entries.put(seed);
    clock.advance(1000);
  }
  REQUIRE(totals_of(*store).evictions == 2);  // down to 900 kB with the 11th
  entries.put(11);                            // 1 MB: at the limit, not over it
  CHECK(totals_of(*store).evictions == 2);
  CHECK(totals_of(*store).bytes_stored == 10 * k_image_bytes);
  entries.put(12);
  CHECK(totals_of(*store).evictions == 4);
  CHECK_FALSE(entries.present(2));
  CHECK_FALSE(entries.present(3));
  CHECK(entries.present(4));
}

TEST_CASE(
    "store eviction: an image handed out before its entry is evicted stays byte-identical, and is not served again") {
  StoreDir dir;
  FakeClock clock;
  auto store = open_limited_store(dir, clock, 3 * k_image_bytes);
  Entries entries{*store};
  entries.put(0);
  clock.advance(1000);
  // Read twice: the second is served from the hot image cache, the buffer a reply would hold.
  REQUIRE(testing::lookup_key_id(*store, proto::key_id(entries.keys[0]), Visibility{0, true}).ok());
  auto served = testing::lookup_key_id(*store, proto::key_id(entries.keys[0]), Visibility{0, true});
  REQUIRE(served.ok());
  REQUIRE(served->has_value());
  REQUIRE(totals_of(*store).hot_cache_entries == 1);
  const auto in_flight = (*served)->image;  // what the server's send holds on to
  clock.advance(1000);
  entries.put(1);
  clock.advance(1000);
  entries.put(2);
  clock.advance(1000);
  entries.put(3);  // over: entry 0 is the least recently used

  CHECK(totals_of(*store).evictions >= 1);
  CHECK_FALSE(entries.present(0));
  CHECK(totals_of(*store).hot_cache_entries == 0);  // its cached image was dropped with the row
  REQUIRE(in_flight->size() == entries.images[0].size());
  CHECK(std::equal(in_flight->begin(), in_flight->end(), entries.images[0].begin()));
}

TEST_CASE("store eviction: an image larger than max_size alone is too_large, and evicts nothing") {
  StoreDir dir;
  FakeClock clock;
  auto store = open_limited_store(dir, clock, 2 * k_image_bytes);
  Entries entries{*store};
  entries.put(0);
  const auto big = make_image(99, 2 * k_image_bytes + 1);
  PutInput input;
  input.key = make_key(99);
  input.producer = "test";
  input.image = big;
  auto put = store->put(input);
  REQUIRE_FALSE(put.ok());
  CHECK(put.error().code == ErrorCode::too_large);
  CHECK(entries.present(0));
  CHECK(totals_of(*store).evictions == 0);
}

TEST_CASE("store eviction: quarantined entries count towards the size and are evicted by last use") {
  StoreDir dir;
  FakeClock clock;
  auto store = open_limited_store(dir, clock, 3 * k_image_bytes);
  Entries entries{*store};
  for (int seed = 0; seed < 3; ++seed) {
    entries.put(seed);
    clock.advance(1000);
  }
  auto reported = store->report_failure(proto::key_id(entries.keys[0]), Visibility{0, true}, {});
  REQUIRE(reported.ok());
  REQUIRE(reported->has_value());
  CHECK(totals_of(*store).bytes_stored == 3 * k_image_bytes);
  entries.put(3);  // 400 kB > 300 kB: down to 270 - 100 kB, the quarantined entry 0 and entry 1
  CHECK(totals_of(*store).entries_quarantined == 0);
  CHECK(totals_of(*store).evicted_bytes == 2 * k_image_bytes);
  CHECK(entries.present(2));
}

TEST_CASE("store eviction: entries of a driver no client asked for go first, before older entries of a driver in use") {
  StoreDir dir;
  FakeClock clock;
  auto store = open_limited_store(dir, clock, 6 * k_image_bytes, std::chrono::hours(24));
  Entries entries{*store};
  // The driver in use wrote first: its entries are the least recently used.
  for (int seed = 0; seed < 3; ++seed) entries.put(seed, "590.10");
  clock.advance(1000);
  for (int seed = 3; seed < 6; ++seed) entries.put(seed, "580.159.04");
  clock.advance(2 * k_day_ms);
  store->note_driver_asked(
      daemon::store::AskedDriver{13000, "590.10"});  // a LOOKUP that missed still says the driver is in use

  ListQuery stale;
  stale.stale_only = true;
  auto listed = store->list(stale, Visibility{0, true});
  REQUIRE(listed.ok());
  REQUIRE(listed->entries.size() == 3);
  for (const auto& entry : listed->entries) CHECK(entry.key.driver_build == "580.159.04");
  ListQuery all;
  auto everything = store->list(all, Visibility{0, true});
  REQUIRE(everything.ok());
  CHECK(everything->entries.size() == 6);

  entries.put(6, "590.10");  // over: 700 kB > 600 kB, evict down to 540 - 100 = 440 kB
  CHECK(totals_of(*store).evictions == 2);
  CHECK_FALSE(entries.present(3));
  CHECK_FALSE(entries.present(4));
  for (int seed : {0, 1, 2, 5, 6}) {
    CAPTURE(seed);
    CHECK(entries.present(seed));
  }
}

TEST_CASE("store gc: removes every stale entry under max_size too, then the least recently used over it") {
  StoreDir dir;
  FakeClock clock;
  auto store = open_limited_store(dir, clock, 100 * k_image_bytes, std::chrono::hours(24));
  Entries entries{*store};
  entries.put(0, "580.159.04");
  entries.put(1, "590.10");
  clock.advance(2 * k_day_ms);
  store->note_driver_asked(daemon::store::AskedDriver{13000, "590.10"});

  auto gc = store->collect_garbage();
  REQUIRE(gc.ok());
  CHECK(gc->evicted_entries == 1);
  CHECK(gc->stale_entries == 1);
  CHECK(gc->evicted_bytes == k_image_bytes);
  CHECK(gc->entries == 1);
  CHECK(gc->bytes_stored == k_image_bytes);
  CHECK_FALSE(entries.present(0));
  CHECK(entries.present(1));

  auto again = store->collect_garbage();
  REQUIRE(again.ok());
  CHECK(again->evicted_entries == 0);
}

TEST_CASE("store gc: without a limit or stale drivers it removes nothing") {
  StoreDir dir;
  FakeClock clock;
  auto store = open_limited_store(dir, clock, 0);
  Entries entries{*store};
  for (int seed = 0; seed < 5; ++seed) entries.put(seed);
  clock.advance(365 * k_day_ms);
  auto gc = store->collect_garbage();
  REQUIRE(gc.ok());
  CHECK(gc->evicted_entries == 0);
  CHECK(gc->entries == 5);
  ListQuery stale;
  stale.stale_only = true;
  auto listed = store->list(stale, Visibility{0, true});
  REQUIRE(listed.ok());
  CHECK(listed->entries.empty());  // stale_driver_after 0: never stale
}

TEST_CASE("store eviction: the drivers asked for survive a reopen (they are written with the usage)") {
  StoreDir dir;
  FakeClock clock;
  {
    auto store = open_limited_store(dir, clock, 0, std::chrono::hours(24));
    Entries entries{*store};
    entries.put(0, "580.159.04");
    clock.advance(2 * k_day_ms);
    store->note_driver_asked(daemon::store::AskedDriver{13000, "580.159.04"});
  }  // closing flushes
  auto store = open_limited_store(dir, clock, 0, std::chrono::hours(24));
  ListQuery stale;
  stale.stale_only = true;
  auto listed = store->list(stale, Visibility{0, true});
  REQUIRE(listed.ok());
  CHECK(listed->entries.empty());
  clock.advance(2 * k_day_ms);
  listed = store->list(stale, Visibility{0, true});
  REQUIRE(listed.ok());
  CHECK(listed->entries.size() == 1);
}

TEST_CASE("store eviction: a driver without a drivers row (an older jitcached wrote its entries) gets one at open") {
  StoreDir dir;
  FakeClock clock;
  {
    auto store = open_limited_store(dir, clock, 0, std::chrono::hours(24));
    Entries entries{*store};
    entries.put(0, "580.159.04");
  }
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(dir.db().c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "DELETE FROM drivers", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  clock.advance(2 * k_day_ms);

  auto store = open_limited_store(dir, clock, 0, std::chrono::hours(24));
  ListQuery stale;
  stale.stale_only = true;
  auto listed = store->list(stale, Visibility{0, true});
  REQUIRE(listed.ok());
  CHECK(listed->entries.size() == 1);  // as last asked for when it was last used: 2 days ago
  auto gc = store->collect_garbage();
  REQUIRE(gc.ok());
  CHECK(gc->stale_entries == 1);
}
