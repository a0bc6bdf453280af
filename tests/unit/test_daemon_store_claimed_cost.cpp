// A PUT's compile_time_us is the caller's claim (daemon/store/gdsf_priority.hpp
// k_max_claimed_compile_cost_us): an untrusted uid that claims the longest compiles still pays for
// its own size pressure with its own entries (sqlite_store_write.cpp, evict_own_first_locked), and
// its entries never outrank shared work when a shared write makes room; under both eviction orders.
// Real SQLite files.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include <daemon/store/eviction_order.hpp>
#include <daemon/store/gdsf_priority.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using daemon::store::EvictionOrder;
using testing::FakeClock;
using testing::StoreDir;

constexpr std::size_t k_image_bytes = 100'000;
constexpr std::uint32_t k_b = 1001;  // the untrusted uid's namespace
constexpr std::uint64_t k_claim = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

struct Fixture {
  explicit Fixture(EvictionOrder order) : store(testing::open_sized_store(dir, clock, order, 10 * k_image_bytes)) {}

  // A shared entry compiled honestly in 2 s.
  void put_shared(int seed) {
    auto input = testing::make_put(testing::make_key(seed), testing::make_image(seed, k_image_bytes));
    input.compile_time_us = 2'000'000;
    testing::put_ok(*store, input);
    clock.advance(1000);
  }
  // One of B's, claiming the longest compile there is.
  void put_b(int seed) {
    auto input = testing::make_put(testing::make_key(seed), testing::make_image(seed, k_image_bytes), k_b);
    input.compile_time_us = k_claim;
    testing::put_ok(*store, input);
    clock.advance(1000);
  }
  std::uint64_t count(std::uint32_t ns) const { return testing::count_in_namespace(dir, ns); }

  StoreDir dir;
  FakeClock clock;
  std::unique_ptr<daemon::store::SqliteStore> store;
};

}  // namespace

TEST_CASE("claimed cost: an untrusted uid's PUTs over max_size evict its own entries, not the shared ones") {
  const EvictionOrder order = testing::eviction_order_under_test();
  INFO("order " << static_cast<int>(order));
  Fixture f(order);
  for (int seed = 1; seed <= 8; ++seed) f.put_shared(seed);
  for (int seed = 101; seed <= 119; ++seed) f.put_b(seed);
  CHECK(f.count(0) == 8);
  CHECK(f.count(k_b) >= 1);
  CHECK(f.count(0) + f.count(k_b) <= 10);
}

TEST_CASE("claimed cost: a shared write that makes room takes the untrusted uid's claimed entries before shared work") {
  const EvictionOrder order = testing::eviction_order_under_test();
  INFO("order " << static_cast<int>(order));
  Fixture f(order);
  // B's first: lru takes them for their age; gdsf must not keep them for their claims.
  for (int seed = 101; seed <= 105; ++seed) f.put_b(seed);
  for (int seed = 1; seed <= 5; ++seed) f.put_shared(seed);
  REQUIRE(f.count(0) + f.count(k_b) == 10);
  f.put_shared(6);  // over max_size: two entries go
  CHECK(f.count(0) == 6);
  CHECK(f.count(k_b) == 3);
}

TEST_CASE(
    "claimed cost: an untrusted namespace's claim counts at most an unmeasured compile, a shared one up to 120 s") {
  using daemon::store::compile_cost_us;
  CHECK(compile_cost_us(k_claim, 0) == daemon::store::k_max_compile_cost_us);
  CHECK(compile_cost_us(k_claim, k_b) == daemon::store::k_unknown_compile_cost_us);
  CHECK(compile_cost_us(5'000, k_b) == 5'000);  // a claim may lower its own entry's worth
  CHECK(daemon::store::gdsf_priority(0, 7, k_claim, k_image_bytes, k_b) <
        daemon::store::gdsf_priority(0, 0, 2'000'000, k_image_bytes, 0));
}
