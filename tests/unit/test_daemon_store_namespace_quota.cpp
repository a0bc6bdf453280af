// The per-uid quota (daemon/store/namespace_quota.hpp) in SqliteStore: a PUT over an untrusted
// uid's quota evicts that uid's own least recently used entries and nothing else, an image larger
// than the quota is refused, the shared namespace has none, and namespace_totals stays exact.
// Real SQLite files.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <proto/key.hpp>

#include <daemon/store/namespace_quota.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/sqlite_text_query.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using daemon::store::PutInput;
using daemon::store::SqliteStore;
using daemon::store::SqliteStoreOptions;
using daemon::store::Visibility;
using testing::StoreDir;

constexpr std::uint64_t k_quota = 1 << 20;
constexpr std::size_t k_image_bytes = 300 * 1024;
const Visibility k_trusted{0, true};

struct Fixture {
  StoreDir dir{"jitcache-quota-test"};
  std::shared_ptr<std::atomic<std::int64_t>> now = std::make_shared<std::atomic<std::int64_t>>(1'700'000'000'000);
  std::unique_ptr<SqliteStore> store = open();

  std::unique_ptr<SqliteStore> open() {
    SqliteStoreOptions options;
    options.path = dir.db();
    options.reader_count = 2;
    options.namespace_quota_bytes = k_quota;
    options.compression_level = 0;  // stored bytes = image bytes, so the arithmetic below is exact
    options.clock = [now = now] { return now->fetch_add(1000); };
    auto opened = SqliteStore::open(options);
    INFO((opened ? std::string() : opened.error().message));
    REQUIRE(opened.ok());
    return std::move(*opened);
  }

  common::Result<daemon::store::PutOutcome> put(std::uint64_t seed, std::uint32_t namespace_id,
                                                std::size_t bytes = k_image_bytes) {
    PutInput input;
    input.key = testing::sample_key(seed);
    input.namespace_id = namespace_id;
    input.producer = "test";
    const auto image = testing::sample_image(seed, bytes);
    input.image = image;
    return store->put(input);
  }

  bool present(std::uint64_t seed, std::uint32_t namespace_id) {
    return query("SELECT COUNT(*) FROM entries WHERE namespace = " + std::to_string(namespace_id) + " AND key_id = x'" +
                 proto::to_hex(proto::key_id(testing::sample_key(seed))) + "'") == "1";
  }

  std::string query(const std::string& sql) { return testing::query_text(dir.db(), sql); }

  // namespace_totals against a sum over the entries, for every namespace.
  void check_totals_exact() {
    CHECK(query("SELECT group_concat(namespace || ':' || entries || ':' || bytes_stored, ' ') FROM"
                " (SELECT * FROM namespace_totals ORDER BY namespace)") ==
          query("SELECT group_concat(namespace || ':' || n || ':' || b, ' ') FROM (SELECT namespace, COUNT(*) AS n,"
                " SUM(stored_size) AS b FROM entries GROUP BY namespace ORDER BY namespace)"));
  }
};

}  // namespace

TEST_CASE("namespace quota: a PUT over a uid's quota evicts that uid's least recently used entries, nothing else") {
  Fixture f;
  for (std::uint64_t seed : {1, 2, 3}) REQUIRE(f.put(seed, 1000).ok());      // 900 KiB of 1 MiB
  for (std::uint64_t seed : {11, 12, 13, 14}) REQUIRE(f.put(seed, 0).ok());  // shared: no quota
  for (std::uint64_t seed : {21, 22, 23}) REQUIRE(f.put(seed, 2000).ok());
  // A hit makes entry 1 the most recently used of uid 1000, so 2 is the oldest now.
  auto hit = testing::lookup_key_id(*f.store, proto::key_id(testing::sample_key(1)), Visibility{1000, false});
  REQUIRE(hit.ok());
  REQUIRE(hit->has_value());

  REQUIRE(f.put(4, 1000).ok());
  CHECK(f.present(1, 1000));
  CHECK_FALSE(f.present(2, 1000));
  CHECK(f.present(3, 1000));
  CHECK(f.present(4, 1000));
  for (std::uint64_t seed : {11, 12, 13, 14}) CHECK(f.present(seed, 0));
  for (std::uint64_t seed : {21, 22, 23}) CHECK(f.present(seed, 2000));
  CHECK(std::stoull(f.query("SELECT bytes_stored FROM namespace_totals WHERE namespace = 1000")) <= k_quota);
  auto totals = f.store->totals();
  REQUIRE(totals.ok());
  CHECK(totals->quota_evictions == 1);
  CHECK(totals->evictions == 0);
  f.check_totals_exact();
}

TEST_CASE("namespace quota: an image larger than the quota is refused as too large, and the store is unchanged") {
  Fixture f;
  REQUIRE(f.put(1, 1000).ok());
  auto refused = f.put(2, 1000, k_quota + 1);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == common::ErrorCode::too_large);
  CHECK_THAT(refused.error().message, Catch::Contains("namespace_quota"));
  CHECK(f.present(1, 1000));
  // The shared namespace takes it: the quota is for what one uid stores for itself.
  CHECK(f.put(2, 0, k_quota + 1).ok());
}

TEST_CASE("namespace quota: namespace totals stay exact across puts, replacements, removes and reopening") {
  Fixture f;
  REQUIRE(f.put(1, 1000, 1000).ok());
  REQUIRE(f.put(2, 1000, 2000).ok());
  REQUIRE(f.put(3, 0, 3000).ok());
  f.check_totals_exact();
  REQUIRE(f.put(1, 1000, 5000).ok());  // a replacement with another size
  f.check_totals_exact();
  REQUIRE(f.store->remove(proto::to_hex(proto::key_id(testing::sample_key(2))), Visibility{1000, false}).ok());
  f.check_totals_exact();
  REQUIRE(f.store->remove(proto::to_hex(proto::key_id(testing::sample_key(1))), k_trusted).ok());
  CHECK(f.query("SELECT COUNT(*) FROM namespace_totals WHERE namespace = 1000") == "0");
  f.store.reset();
  f.store = f.open();
  f.check_totals_exact();
}

TEST_CASE("namespace quota: every entry counts its image and a fixed overhead, so tiny entries cannot outgrow it") {
  Fixture f;
  // 2 000 entries of small images (the smallest sample cubin, a few hundred bytes) are well under
  // the quota in image bytes alone, but each costs the store its row and index entries too
  // (namespace_quota.hpp k_entry_overhead_bytes).
  constexpr std::size_t k_tiny = 100;
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) REQUIRE(f.put(seed, 1000, k_tiny).ok());
  const std::uint64_t entries = std::stoull(f.query("SELECT entries FROM namespace_totals WHERE namespace = 1000"));
  const std::uint64_t images = std::stoull(f.query("SELECT bytes_stored FROM namespace_totals WHERE namespace = 1000"));
  INFO(entries << " entries, " << images << " bytes of images");
  CHECK(images < k_quota / 2);
  CHECK(images + entries * daemon::store::k_entry_overhead_bytes <= k_quota);
  CHECK(images + entries * daemon::store::k_entry_overhead_bytes >= k_quota * 8 / 10);  // about the low water
  CHECK(f.present(2000, 1000));  // the newest stays: its own oldest made room
  f.check_totals_exact();
  // An image that fits the quota only without its entry's overhead is too large.
  auto refused = f.put(3000, 1000, k_quota - daemon::store::k_entry_overhead_bytes + 1);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == common::ErrorCode::too_large);
}
