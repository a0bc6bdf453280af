// What the store tells EXPLAIN (daemon/store/diagnosis.hpp): every eviction, by size, stale driver
// or quota, lands in the eviction ring with the entry's key fields, sizes, hits, compile time and
// reason; and near_entries finds the entries of a content digest in every namespace.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <daemon/store/diagnosis.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using daemon::store::EvictedEntry;
using daemon::store::EvictionReason;
using daemon::store::SqliteStoreOptions;
using daemon::store::Visibility;
using testing::FakeClock;
using testing::StoreDir;

constexpr std::size_t k_image_bytes = 100'000;

SqliteStoreOptions options_for(const StoreDir& dir, const FakeClock& clock) {
  SqliteStoreOptions options;
  options.path = dir.db();
  options.reader_count = 2;
  options.clock = clock.function();
  options.compression_level = 0;
  return options;
}

}  // namespace

TEST_CASE("evicted entries: an eviction by size is recorded with the entry's key fields, sizes and reason") {
  StoreDir dir;
  FakeClock clock;
  auto options = options_for(dir, clock);
  options.max_size_bytes = 3 * k_image_bytes;
  auto store = testing::open_store(options);
  const proto::KeyFields first = testing::make_key(1);
  testing::put_ok(*store, testing::make_put(first, testing::make_image(1, k_image_bytes)));
  clock.advance(1000);
  for (int seed = 2; seed <= 3; ++seed) {
    testing::put_ok(*store, testing::make_put(testing::make_key(seed), testing::make_image(seed, k_image_bytes)));
    clock.advance(1000);
  }
  const std::int64_t evicting_put_at = clock.now->load();
  testing::put_ok(*store, testing::make_put(testing::make_key(4), testing::make_image(4, k_image_bytes)));
  const std::vector<EvictedEntry> of_first = store->diagnosis().evictions_of(proto::key_id(first));
  REQUIRE(of_first.size() == 1);
  const EvictedEntry& evicted = of_first[0];
  CHECK(evicted.key == first);
  CHECK(evicted.namespace_id == 0);
  CHECK(evicted.reason == EvictionReason::size);
  CHECK(evicted.stored_bytes == k_image_bytes);
  CHECK(evicted.compile_time_us == 4'800'000);
  CHECK(evicted.evicted_at_ms == evicting_put_at);
  const auto recent = store->diagnosis().recent_evictions(10, Visibility{0, false});
  REQUIRE_FALSE(recent.empty());
  CHECK(recent.back().key_id == proto::key_id(first));  // newest first: the first went first
}

TEST_CASE("evicted entries: a quota eviction says quota, and a uid sees only the shared namespace's and its own") {
  StoreDir dir;
  FakeClock clock;
  auto options = options_for(dir, clock);
  options.namespace_quota_bytes = 2 * k_image_bytes;
  auto store = testing::open_store(options);
  constexpr std::uint32_t k_uid = 1000;
  const proto::KeyFields first = testing::make_key(1);
  for (int seed = 1; seed <= 3; ++seed) {
    testing::put_ok(*store,
                    testing::make_put(testing::make_key(seed), testing::make_image(seed, k_image_bytes), k_uid));
    clock.advance(1000);
  }
  const auto of_first = store->diagnosis().evictions_of(proto::key_id(first));
  REQUIRE(of_first.size() == 1);
  CHECK(of_first[0].reason == EvictionReason::quota);
  CHECK(of_first[0].namespace_id == k_uid);
  // 300 kB over a 200 kB quota: down to 90% of it less the incoming image, so two went.
  CHECK(store->diagnosis().recent_evictions(10, Visibility{k_uid, false}).size() == 2);
  CHECK(store->diagnosis().recent_evictions(10, Visibility{k_uid + 1, false}).empty());
  CHECK(store->diagnosis().recent_evictions(10, Visibility{0, true}).size() == 2);
}

TEST_CASE("evicted entries: GC's eviction of a stale driver's entries says stale_driver") {
  StoreDir dir;
  FakeClock clock;
  auto options = options_for(dir, clock);
  options.stale_driver_after = std::chrono::hours(24);
  auto store = testing::open_store(options);
  const proto::KeyFields old_driver = testing::make_key(1, "sm_90", 13000, "570.86.10");
  testing::put_ok(*store, testing::make_put(old_driver, testing::make_image(1, k_image_bytes)));
  clock.advance(48 * 3'600'000LL);
  REQUIRE(store->collect_garbage());
  const auto evicted = store->diagnosis().evictions_of(proto::key_id(old_driver));
  REQUIRE(evicted.size() == 1);
  CHECK(evicted[0].reason == EvictionReason::stale_driver);
  CHECK(evicted[0].key.driver_build == "570.86.10");
}

TEST_CASE(
    "evicted entries: near_entries finds the key and the same content in every namespace for a trusted caller, quarantine too") {
  StoreDir dir;
  FakeClock clock;
  auto store = testing::open_store(options_for(dir, clock));
  const proto::KeyFields key = testing::make_key(1);
  const proto::KeyFields other_arch = testing::make_key(1, "sm_80");
  const proto::KeyFields unrelated = testing::make_key(2);
  testing::put_ok(*store, testing::make_put(key, testing::make_image(1, 1000)));
  testing::put_ok(*store, testing::make_put(other_arch, testing::make_image(2, 1000), 1000));
  testing::put_ok(*store, testing::make_put(unrelated, testing::make_image(3, 1000)));
  daemon::store::FailureReport report;
  report.cu_result = 209;
  report.stage = proto::FailureStage::image;
  report.detail = "no binary";
  report.reporter_uid = 0;
  REQUIRE(store->report_failure(proto::key_id(key), Visibility{0, true}, report));

  auto near = store->diagnosis().near_entries(proto::key_id(key), key.content, Visibility{0, true}, 1000, 64);
  REQUIRE(near);
  REQUIRE(near->size() == 2);
  CHECK((*near)[0].info.key == key);  // the key's own first
  CHECK((*near)[0].info.quarantined_at_ms != 0);
  CHECK((*near)[0].quarantine_result == 209);
  CHECK((*near)[0].quarantine_stage == static_cast<std::uint8_t>(proto::FailureStage::image));
  CHECK((*near)[0].quarantine_detail == "no binary");
  CHECK((*near)[1].info.key == other_arch);
  CHECK((*near)[1].info.namespace_id == 1000);
  auto by_id = store->diagnosis().near_entries(proto::key_id(other_arch), std::nullopt, Visibility{0, true}, 0, 64);
  REQUIRE(by_id);
  REQUIRE(by_id->size() == 1);
  CHECK(by_id->front().info.key == other_arch);
}
