// SqliteStore with compression_level set: images stored zstd-compressed, served raw, checked
// against the checksum of the raw bytes; raw and zstd entries side by side (docs/entry-format.md).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <daemon/config/compression_level.hpp>
#include <daemon/config/config.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using namespace jitcache::testing;

// Cubin-like: long runs of similar instruction words and padding; compresses several times over.
std::vector<std::uint8_t> cubin_like_image(std::uint64_t seed, std::size_t size) {
  std::vector<std::uint8_t> image(size);
  const auto noise = make_image(seed, 64);
  for (std::size_t i = 0; i < size; ++i)
    image[i] = (i % 16 < 4) ? noise[(i / 16) % 64] : static_cast<std::uint8_t>(i % 7);
  return image;
}

std::unique_ptr<SqliteStore> open_compressing(const StoreDir& dir, int level, std::uint64_t max_size = 0) {
  SqliteStoreOptions options;
  options.path = dir.db();
  options.compression_level = level;
  options.max_size_bytes = max_size;
  return open_store(options);
}

std::string entry_column(const StoreDir& dir, const proto::Digest256& key_id, const std::string& column) {
  return ExternalDb(dir.db()).text("SELECT " + column + " FROM entries WHERE hex(key_id) = upper('" +
                                   proto::to_hex(key_id) + "')");
}

}  // namespace

TEST_CASE("sqlite store compression: a store opened with default options compresses at the daemon's default level") {
  // One default for the configuration and the store (daemon/config/compression_level.hpp): a store
  // a test or a tool opens without a configuration stores images as the daemon does.
  CHECK(SqliteStoreOptions{}.compression_level == daemon::config::k_default_compression_level);
  CHECK(daemon::config::Config{}.compression_level ==
        static_cast<unsigned>(daemon::config::k_default_compression_level));
  StoreDir dir;
  SqliteStoreOptions options;
  options.path = dir.db();
  auto store = open_store(options);
  const auto key_id = put_ok(*store, make_put(make_key(1), cubin_like_image(1, 300'000)));
  CHECK(entry_column(dir, key_id, "codec") == "1");
}

TEST_CASE("sqlite store compression: a compressible image is stored as zstd and served as its raw bytes") {
  StoreDir dir;
  auto store = open_compressing(dir, 3);
  const auto image = cubin_like_image(1, 300'000);
  const auto key_id = put_ok(*store, make_put(make_key(1), image));

  CHECK(entry_column(dir, key_id, "codec") == "1");
  const auto stored_size = std::stoull(entry_column(dir, key_id, "stored_size"));
  CHECK(stored_size < image.size() / 3);
  CHECK(entry_column(dir, key_id, "raw_size") == std::to_string(image.size()));
  CHECK(ExternalDb(dir.db()).text("SELECT length(data) FROM blobs") == std::to_string(stored_size));

  // Twice: from the database, then from the hot image cache; both raw.
  for (int i = 0; i < 2; ++i) {
    auto found = lookup_ok(*store, key_id);
    REQUIRE(found.has_value());
    CHECK(found->info.codec == 1);
    CHECK(found->info.raw_size == image.size());
    CHECK(found->info.stored_size == stored_size);
    CHECK(std::ranges::equal(*found->image, image));
  }
  auto totals = store->totals();
  REQUIRE(totals.ok());
  CHECK(totals->bytes_raw == image.size());
  CHECK(totals->bytes_stored == stored_size);
}

TEST_CASE("sqlite store compression: raw and zstd entries are both served from one store") {
  StoreDir dir;
  const auto image = cubin_like_image(2, 100'000);
  proto::Digest256 raw_key;
  proto::Digest256 zstd_key;
  {
    auto store = open_compressing(dir, 0);  // level 0 stores raw, as an older jitcached did
    raw_key = put_ok(*store, make_put(make_key(1), image));
  }
  CHECK(entry_column(dir, raw_key, "codec") == "0");
  CHECK(entry_column(dir, raw_key, "stored_size") == std::to_string(image.size()));
  {
    auto store = open_compressing(dir, 3);
    zstd_key = put_ok(*store, make_put(make_key(2), image));
    auto raw = lookup_ok(*store, raw_key);
    REQUIRE(raw.has_value());
    CHECK(raw->info.codec == 0);
    CHECK(std::ranges::equal(*raw->image, image));
  }
  CHECK(entry_column(dir, zstd_key, "codec") == "1");
  // Turning compression off later leaves the compressed entries readable.
  auto store = open_compressing(dir, 0);
  auto zstd = lookup_ok(*store, zstd_key);
  REQUIRE(zstd.has_value());
  CHECK(std::ranges::equal(*zstd->image, image));
  auto totals = store->totals();
  REQUIRE(totals.ok());
  CHECK(totals->bytes_raw == 2 * image.size());
  CHECK(totals->bytes_stored < totals->bytes_raw);
}

TEST_CASE("sqlite store compression: an image compression would not shrink is stored raw") {
  StoreDir dir;
  auto store = open_compressing(dir, 3);
  const auto random = make_image(5, 100'000);
  const auto key_id = put_ok(*store, make_put(make_key(5), random));
  CHECK(entry_column(dir, key_id, "codec") == "0");
  CHECK(entry_column(dir, key_id, "stored_size") == "100000");
  auto found = lookup_ok(*store, key_id);
  REQUIRE(found.has_value());
  CHECK(std::ranges::equal(*found->image, random));
}

TEST_CASE("sqlite store compression: a damaged zstd blob is a miss, deleted and counted") {
  StoreDir dir;
  auto store = open_compressing(dir, 3);
  const auto image = cubin_like_image(9, 200'000);
  const auto key_id = put_ok(*store, make_put(make_key(9), image));
  const auto healthy = put_ok(*store, make_put(make_key(10), image));
  REQUIRE(entry_column(dir, key_id, "codec") == "1");
  const std::string row = "(SELECT id FROM entries WHERE hex(key_id) = upper('" + proto::to_hex(key_id) + "'))";

  SECTION("flipped bytes inside the frame") {
    ExternalDb(dir.db()).exec(
        "UPDATE blobs SET data = CAST(substr(data, 1, 40) || x'DEADBEEFDEADBEEF' || "
        "substr(data, 49) AS BLOB) WHERE entry_id = " +
        row);
  }
  SECTION("a truncated frame, its stored_size updated to match") {
    ExternalDb external(dir.db());
    external.exec("UPDATE blobs SET data = substr(data, 1, length(data) / 2) WHERE entry_id = " + row);
    external.exec("UPDATE entries SET stored_size = stored_size / 2 WHERE id = " + row);
  }
  SECTION("a raw_size that is not the frame's content size") {
    ExternalDb(dir.db()).exec("UPDATE entries SET raw_size = raw_size - 1 WHERE id = " + row);
  }

  CHECK_FALSE(lookup_ok(*store, key_id).has_value());
  auto totals = store->totals();
  REQUIRE(totals.ok());
  CHECK(totals->corrupt_entries == 1);
  CHECK(totals->entries == 1);
  CHECK(entry_column(dir, key_id, "COUNT(*)") == "0");
  auto other = lookup_ok(*store, healthy);
  REQUIRE(other.has_value());
  CHECK(std::ranges::equal(*other->image, image));
}

TEST_CASE("sqlite store compression: max_size counts stored bytes, so compressed images evict later") {
  // Ten images of 512 KiB raw that compress to a few KiB each: 5 MiB raw under a 1 MiB limit.
  constexpr std::uint64_t k_limit = 1ull << 20;
  for (int level : {0, 3}) {
    CAPTURE(level);
    StoreDir dir;
    auto store = open_compressing(dir, level, k_limit);
    for (int i = 0; i < 10; ++i) put_ok(*store, make_put(make_key(i), cubin_like_image(i, 512 * 1024)));
    auto totals = store->totals();
    REQUIRE(totals.ok());
    CHECK(totals->bytes_stored <= k_limit);
    if (level == 0) {
      CHECK(totals->evictions > 0);
    } else {
      CHECK(totals->evictions == 0);
      CHECK(totals->entries == 10);
      CHECK(totals->bytes_raw == 10ull * 512 * 1024);
    }
  }
}

TEST_CASE("sqlite store compression: a level outside 0..19 is refused at open") {
  StoreDir dir;
  SqliteStoreOptions options;
  options.path = dir.db();
  options.compression_level = 20;
  auto store = SqliteStore::open(options);
  REQUIRE_FALSE(store.ok());
  CHECK(store.error().code == common::ErrorCode::invalid_argument);
}
