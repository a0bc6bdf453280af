// An untrusted uid's size pressure is paid with its own entries first, whichever way its entries
// arrive (PROTOCOL.md §5 PUT: "an untrusted uid's PUT evicts that uid's own least recently used
// entries first"; docs/security.md "Who pays for what"). An IMPORT_BUNDLE into its own namespace
// (`jitcache import --own`) is such a write: over max_size, it must not evict shared entries while
// the importing uid has entries of its own to give. Real SQLite files, both eviction orders.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <daemon/bundle/bundle_entry.hpp>
#include <daemon/store/entry_transfer.hpp>
#include <daemon/store/eviction_order.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using daemon::store::EvictionOrder;
using daemon::store::ExportFilter;
using daemon::store::ImportOptions;
using testing::FakeClock;
using testing::StoreDir;

constexpr std::size_t k_image_bytes = 100'000;
constexpr std::uint32_t k_b = 1001;  // the untrusted uid's namespace

std::unique_ptr<daemon::store::SqliteStore> open_sized(const StoreDir& dir, FakeClock& clock, EvictionOrder order) {
  return testing::open_sized_store(dir, clock, order, 10 * k_image_bytes);
}

}  // namespace

TEST_CASE("import own first: an untrusted uid's import over max_size evicts its own entries, not the shared ones") {
  const EvictionOrder order = testing::eviction_order_under_test();
  INFO("order " << static_cast<int>(order));

  // Three entries of B's, made on another store (any exporter will do: an --own import takes them).
  std::vector<daemon::bundle::BundleEntry> bundle;
  {
    StoreDir source_dir;
    FakeClock source_clock;
    auto source = open_sized(source_dir, source_clock, order);
    for (int seed = 201; seed <= 203; ++seed) {
      testing::put_ok(*source, testing::make_put(testing::make_key(seed), testing::make_image(seed, k_image_bytes)));
    }
    auto written = source->transfer().export_entries(
        ExportFilter{}, [](std::uint64_t) -> common::Result<void> { return {}; },
        [&](const daemon::bundle::BundleEntry& entry) -> common::Result<void> {
          bundle.push_back(entry);
          return {};
        });
    REQUIRE(written);
  }
  REQUIRE(bundle.size() == 3);

  StoreDir dir;
  FakeClock clock;
  auto store = open_sized(dir, clock, order);
  // The shared entries first (honest 2 s compiles), then B's: the oldest are the shared ones.
  for (int seed = 1; seed <= 4; ++seed) {
    auto input = testing::make_put(testing::make_key(seed), testing::make_image(seed, k_image_bytes));
    input.compile_time_us = 2'000'000;
    testing::put_ok(*store, input);
    clock.advance(1000);
  }
  for (int seed = 101; seed <= 106; ++seed) {
    testing::put_ok(*store, testing::make_put(testing::make_key(seed), testing::make_image(seed, k_image_bytes), k_b));
    clock.advance(1000);
  }
  REQUIRE(testing::count_in_namespace(dir, 0) == 4);
  REQUIRE(testing::count_in_namespace(dir, k_b) == 6);

  ImportOptions options;
  options.namespace_id = k_b;
  for (const auto& entry : bundle) options.stored_bytes += entry.image.size();
  options.entry_count = bundle.size();
  std::size_t next = 0;
  auto imported =
      store->transfer().import_entries(options, [&]() -> common::Result<std::optional<daemon::bundle::BundleEntry>> {
        if (next == bundle.size()) return std::optional<daemon::bundle::BundleEntry>();
        return std::optional<daemon::bundle::BundleEntry>(bundle[next++]);
      });
  INFO((imported ? std::string() : imported.error().message));
  REQUIRE(imported);
  CHECK(testing::count_in_namespace(dir, 0) == 4);  // the shared entries stay: B paid with its own
  CHECK(testing::count_in_namespace(dir, k_b) >= 3);
  CHECK(testing::count_in_namespace(dir, 0) + testing::count_in_namespace(dir, k_b) <= 10);
}
