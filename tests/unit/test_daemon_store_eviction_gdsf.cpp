// Cost-aware eviction (eviction_policy = "gdsf", the default; daemon/store/gdsf_priority.hpp)
// through the real SqliteStore on a real SQLite file and a fake clock: what it keeps against what
// LRU would, the inflation value L and its persistence, and its place after the stale-driver pass.
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <proto/digest.hpp>
#include <proto/key.hpp>

#include <daemon/store/eviction_order.hpp>
#include <daemon/store/gdsf_priority.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using daemon::store::EvictionOrder;
using daemon::store::SqliteStore;
using daemon::store::SqliteStoreOptions;
using daemon::store::Visibility;
using testing::ExternalDb;
using testing::FakeClock;
using testing::StoreDir;

constexpr std::size_t k_kb = 1000;

std::unique_ptr<SqliteStore> open_limited(const StoreDir& dir, const FakeClock& clock, std::uint64_t max_size,
                                          EvictionOrder order = EvictionOrder::gdsf,
                                          std::chrono::milliseconds stale_after = std::chrono::milliseconds(0)) {
  SqliteStoreOptions options;
  options.path = dir.db();
  options.reader_count = 2;
  options.clock = clock.function();
  options.max_size_bytes = max_size;
  options.stale_driver_after = stale_after;
  options.eviction_order = order;
  return testing::open_store(options);
}

// Entry `seed`: `bytes` of incompressible image (stored raw, so stored_size == bytes), compiled in
// `compile_us`.
struct Entry {
  int seed = 0;
  std::size_t bytes = 100 * k_kb;
  std::uint64_t compile_us = 1'000'000;
  std::string driver_build = "580.159.04";
};

proto::KeyFields key_of(const Entry& entry) {
  return testing::make_key(entry.seed, "sm_90", 13000, entry.driver_build);
}

void put(SqliteStore& store, const Entry& entry) {
  const std::vector<std::uint8_t> image = testing::make_image(static_cast<std::uint64_t>(entry.seed), entry.bytes);
  auto input = testing::make_put(key_of(entry), image);  // a view of `image`
  input.compile_time_us = entry.compile_us;
  testing::put_ok(store, input);
}

std::string key_id_literal(const Entry& entry) { return "x'" + proto::to_hex(proto::key_id(key_of(entry))) + "'"; }

// Whether the entry is stored, read from the file: a LOOKUP would count a hit and change the order.
bool present(const StoreDir& dir, const Entry& entry) {
  return ExternalDb(dir.db()).text("SELECT COUNT(*) FROM entries WHERE key_id = " + key_id_literal(entry)) == "1";
}

// Hits, as LOOKUPs count them (in memory until the next flush or eviction).
void hit(SqliteStore& store, const Entry& entry, int times = 1) {
  for (int i = 0; i < times; ++i) {
    auto found = testing::lookup_key_id(store, proto::key_id(key_of(entry)), Visibility{0, true});
    REQUIRE(found.ok());
    REQUIRE(found->has_value());
  }
}

double inflation(const StoreDir& dir) {
  return std::stod(ExternalDb(dir.db()).text("SELECT value FROM eviction_inflation"));
}

double priority(const StoreDir& dir, const Entry& entry) {
  const std::string text =
      ExternalDb(dir.db()).text("SELECT priority FROM entries WHERE key_id = " + key_id_literal(entry));
  REQUIRE_FALSE(text.empty());
  return std::stod(text);
}

std::uint64_t evictions(SqliteStore& store) {
  auto totals = store.totals();
  REQUIRE(totals.ok());
  return totals->evictions;
}

}  // namespace

TEST_CASE("gdsf priority: an unknown compile time counts 100 ms, recorded ones 1 ms .. 120 s, hits up to 7") {
  using namespace daemon::store;
  CHECK(compile_cost_us(0) == 100'000);
  CHECK(compile_cost_us(1) == 1'000);
  CHECK(compile_cost_us(4'800'000) == 4'800'000);
  CHECK(compile_cost_us(std::uint64_t{1} << 62) == 120'000'000);
  // Microseconds per stored byte: 5 s for 50 kB is worth 100, twice with one hit, on top of L.
  CHECK(gdsf_priority(0, 0, 5'000'000, 50'000) == 100.0);
  CHECK(gdsf_priority(7, 1, 5'000'000, 50'000) == 207.0);
  CHECK(gdsf_priority(0, 0, 5'000'000, 0) == 5'000'000.0);  // an empty image never divides by zero
  // Hits count up to 7: a frequency of at most 8.
  CHECK(gdsf_priority(0, 7, 5'000'000, 50'000) == 800.0);
  CHECK(gdsf_priority(0, 1000, 5'000'000, 50'000) == 800.0);
}

TEST_CASE(
    "store eviction (gdsf): a small entry that was costly to compile outlasts a large cheap one used as "
    "recently, where lru, selected, takes the older write first") {
  const Entry small_costly{0, 50 * k_kb, 5'000'000};
  const Entry large_cheap{1, 400 * k_kb, 20'000};
  const Entry later{2, 400 * k_kb, 20'000};
  const Entry incoming{3, 300 * k_kb, 20'000};
  for (EvictionOrder order : {EvictionOrder::gdsf, EvictionOrder::lru}) {
    CAPTURE(daemon::store::eviction_order_name(order));
    StoreDir dir;
    FakeClock clock;
    auto store = open_limited(dir, clock, 1000 * k_kb, order);
    put(*store, small_costly);  // written first, at the same time as the large one
    put(*store, large_cheap);
    clock.advance(1000);
    put(*store, later);
    clock.advance(1000);
    put(*store, incoming);  // 1 150 kB > 1 000 kB: down to 900 - 300 = 600 kB
    CHECK(present(dir, later));
    CHECK(present(dir, incoming));
    CHECK_FALSE(present(dir, large_cheap));
    if (order == EvictionOrder::gdsf) {
      CHECK(present(dir, small_costly));  // 5 s per 50 kB against 20 ms per 400 kB
      CHECK(evictions(*store) == 1);
    } else {
      CHECK_FALSE(present(dir, small_costly));  // least recently used, oldest written
      CHECK(evictions(*store) == 2);
    }
  }
}

TEST_CASE("store eviction (gdsf): hits count, flushed or not, so an entry hit often outlasts a newer one hit never") {
  StoreDir dir;
  FakeClock clock;
  auto store = open_limited(dir, clock, 300 * k_kb);
  const Entry often{0}, once{1}, newer{2}, incoming{3};
  put(*store, often);
  put(*store, once);
  hit(*store, often, 3);
  REQUIRE(store->flush_usage().ok());
  hit(*store, once);  // only in memory: the eviction writes it first
  clock.advance(1000);
  put(*store, newer);  // the most recently used, but worth one compile only
  clock.advance(1000);
  put(*store, incoming);  // 400 kB > 300 kB: down to 270 - 100 kB, two entries go
  CHECK(present(dir, often));
  CHECK_FALSE(present(dir, once));
  CHECK_FALSE(present(dir, newer));
  CHECK(present(dir, incoming));
}

TEST_CASE("store eviction (gdsf): the priority is the formula's, at a write and after the hits are flushed") {
  using daemon::store::gdsf_priority;
  StoreDir dir;
  FakeClock clock;
  auto store = open_limited(dir, clock, 0);
  const Entry measured{0, 80 * k_kb, 2'345'678};
  const Entry unmeasured{1, 30 * k_kb, 0};
  put(*store, measured);
  put(*store, unmeasured);
  CHECK(priority(dir, measured) == Approx(gdsf_priority(0, 0, 2'345'678, 80 * k_kb)).epsilon(1e-12));
  CHECK(priority(dir, unmeasured) == Approx(gdsf_priority(0, 0, 0, 30 * k_kb)).epsilon(1e-12));
  hit(*store, measured, 4);
  hit(*store, unmeasured, 9);
  REQUIRE(store->flush_usage().ok());
  CHECK(priority(dir, measured) == Approx(gdsf_priority(0, 4, 2'345'678, 80 * k_kb)).epsilon(1e-12));
  // Nine hits count as seven, in SQL as in C++.
  CHECK(priority(dir, unmeasured) == Approx(8.0 * 100'000 / (30 * k_kb)).epsilon(1e-12));
}

TEST_CASE(
    "store eviction (gdsf): L rises with each eviction, so a once-hot entry nobody asks for goes in the end, "
    "and L survives a reopen") {
  StoreDir dir;
  FakeClock clock;
  const Entry hot{0};
  double last_inflation = 0;
  {
    auto store = open_limited(dir, clock, 500 * k_kb);
    put(*store, hot);
    hit(*store, hot, 5);  // worth six compiles
    int seed = 1;
    for (; seed <= 4; ++seed) put(*store, Entry{seed});
    put(*store, Entry{seed++});  // the first eviction: two entries hit never
    REQUIRE(evictions(*store) == 2);
    CHECK(present(dir, hot));
    CHECK(inflation(dir) > 0);

    // New entries, each used once after its write; the hot one is never asked for again.
    bool gone = false;
    for (int round = 0; round < 60 && !gone; ++round, ++seed) {
      put(*store, Entry{seed});
      hit(*store, Entry{seed});
      clock.advance(1000);
      gone = !present(dir, hot);
    }
    CHECK(gone);
    // It went as the lowest: L is at least what it was worth.
    CHECK(inflation(dir) >= daemon::store::gdsf_priority(0, 5, 1'000'000, 100 * k_kb));
    last_inflation = inflation(dir);
  }
  auto store = open_limited(dir, clock, 0);  // no limit: the PUT below evicts nothing, and L stays
  CHECK(inflation(dir) == last_inflation);
  const Entry after_reopen{1000};
  put(*store, after_reopen);
  CHECK(priority(dir, after_reopen) == Approx(daemon::store::gdsf_priority(last_inflation, 0, 1'000'000, 100 * k_kb)));
}

TEST_CASE(
    "store eviction (gdsf): entries of a stale driver still go first, however much they are worth, and do "
    "not raise L") {
  StoreDir dir;
  FakeClock clock;
  auto store = open_limited(dir, clock, 300 * k_kb, EvictionOrder::gdsf, std::chrono::hours(24));
  const Entry old_driver{0, 100 * k_kb, 60'000'000, "570.10"};
  const Entry cheap{1, 100 * k_kb, 1'000};
  put(*store, old_driver);
  hit(*store, old_driver, 10);
  put(*store, cheap);
  clock.advance(2 * 24 * 3'600'000LL);
  store->note_driver_asked(daemon::store::AskedDriver{13000, "580.159.04"});
  put(*store, Entry{2, 100 * k_kb, 1'000});
  put(*store, Entry{3, 100 * k_kb, 1'000});  // 400 kB > 300 kB: down to 170 kB
  CHECK_FALSE(present(dir, old_driver));
  CHECK(inflation(dir) > 0);  // the cheap one went too, by the gdsf order
  CHECK(inflation(dir) < daemon::store::gdsf_priority(0, 10, 60'000'000, 100 * k_kb));
  CHECK_FALSE(present(dir, cheap));
}

TEST_CASE(
    "store eviction (gdsf): an entry without a priority (an older jitcached wrote it) is given one before "
    "eviction chooses") {
  StoreDir dir;
  FakeClock clock;
  const Entry costly{0, 100 * k_kb, 30'000'000};
  {
    auto store = open_limited(dir, clock, 300 * k_kb);
    put(*store, costly);
    put(*store, Entry{1, 100 * k_kb, 1'000});
    put(*store, Entry{2, 100 * k_kb, 1'000});
  }
  ExternalDb(dir.db()).exec("UPDATE entries SET priority = NULL");
  auto store = open_limited(dir, clock, 300 * k_kb);
  put(*store, Entry{3, 100 * k_kb, 1'000});  // 400 kB > 300 kB: two go, the cheap ones
  CHECK(present(dir, costly));
  CHECK_FALSE(present(dir, Entry{1}));
  CHECK_FALSE(present(dir, Entry{2}));
  CHECK(ExternalDb(dir.db()).text("SELECT COUNT(*) FROM entries WHERE priority IS NULL") == "0");
}
