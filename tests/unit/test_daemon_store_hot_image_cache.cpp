// HotImageCache (daemon/store/hot_image_cache.hpp) on its own: what it serves for which row id,
// checksum and size, its byte budget and LRU order, invalidation and the read ticket, and many
// threads at once. SqliteStore's use of it is tested in test_daemon_store_sqlite_store.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <proto/digest.hpp>

#include <daemon/store/hot_image_cache.hpp>

namespace {

using namespace jitcache;
using daemon::store::HotImageCache;
using daemon::store::ImageBuffer;

constexpr std::uint64_t k_overhead = HotImageCache::k_entry_overhead_bytes;

HotImageCache::Image make_image(std::uint8_t fill, std::size_t size) {
  auto image = std::make_shared<ImageBuffer>(size);
  std::fill(image->begin(), image->end(), fill);
  return image;
}

proto::Checksum128 checksum_of(const HotImageCache::Image& image) { return proto::xxh3_128(*image); }

// Inserts with a fresh ticket, as a lookup that saw no concurrent write would.
void insert(HotImageCache& cache, std::int64_t id, const HotImageCache::Image& image) {
  cache.insert(id, checksum_of(image), image, cache.read_ticket());
}

bool serves(HotImageCache& cache, std::int64_t id, const HotImageCache::Image& image) {
  return cache.find(id, checksum_of(image), image->size()) == image;
}

}  // namespace

TEST_CASE("hot image cache: an image is served only for its row id, checksum and size") {
  HotImageCache cache(1 << 20);
  const auto image = make_image(1, 1000);
  const auto checksum = checksum_of(image);
  insert(cache, 7, image);

  CHECK(cache.find(7, checksum, 1000) == image);
  CHECK(cache.find(8, checksum, 1000) == nullptr);  // another row with the same bytes
  CHECK(cache.find(7, checksum_of(make_image(2, 1000)), 1000) == nullptr);
  CHECK(cache.find(7, checksum, 999) == nullptr);

  const auto stats = cache.stats();
  CHECK(stats.hits == 1);
  CHECK(stats.misses == 3);
  CHECK(stats.entries == 1);
  CHECK(stats.bytes == 1000 + k_overhead);
}

TEST_CASE("hot image cache: a new image for a row replaces the old one and is charged once") {
  HotImageCache cache(1 << 20);
  const auto first = make_image(1, 1000);
  const auto second = make_image(2, 3000);
  insert(cache, 7, first);
  insert(cache, 7, second);

  CHECK_FALSE(serves(cache, 7, first));
  CHECK(serves(cache, 7, second));
  CHECK(cache.stats().entries == 1);
  CHECK(cache.stats().bytes == 3000 + k_overhead);
}

TEST_CASE("hot image cache: the least recently used image goes first when the budget is reached") {
  HotImageCache cache(2 * (1000 + k_overhead));
  const auto a = make_image(1, 1000);
  const auto b = make_image(2, 1000);
  const auto c = make_image(3, 1000);
  insert(cache, 1, a);
  insert(cache, 2, b);
  REQUIRE(serves(cache, 1, a));  // a is now more recent than b

  insert(cache, 3, c);
  CHECK(serves(cache, 1, a));
  CHECK_FALSE(serves(cache, 2, b));
  CHECK(serves(cache, 3, c));
  CHECK(cache.stats().entries == 2);
  CHECK(cache.stats().bytes == 2 * (1000 + k_overhead));

  SECTION("a larger image evicts as many as it needs") {
    const auto big = make_image(4, 1500);
    insert(cache, 4, big);
    CHECK(serves(cache, 4, big));
    CHECK_FALSE(serves(cache, 1, a));
    CHECK_FALSE(serves(cache, 3, c));
    CHECK(cache.stats().entries == 1);
    CHECK(cache.stats().bytes == 1500 + k_overhead);
  }
}

TEST_CASE("hot image cache: an image bigger than the whole budget is not cached and evicts nothing") {
  HotImageCache cache(10'000);
  const auto small = make_image(1, 1000);
  insert(cache, 1, small);
  const auto too_big = make_image(2, 10'000);  // with its overhead, over the budget
  insert(cache, 2, too_big);

  CHECK_FALSE(serves(cache, 2, too_big));
  CHECK(serves(cache, 1, small));
  CHECK(cache.stats().entries == 1);
}

TEST_CASE("hot image cache: a budget of 0 caches nothing and counts every find as a miss") {
  HotImageCache cache(0);
  const auto image = make_image(1, 16);
  insert(cache, 1, image);
  CHECK_FALSE(serves(cache, 1, image));
  const auto stats = cache.stats();
  CHECK(stats.entries == 0);
  CHECK(stats.bytes == 0);
  CHECK(stats.hits == 0);
  CHECK(stats.misses == 1);
}

TEST_CASE("hot image cache: an invalidated row id serves nothing, even for an image with the old checksum") {
  HotImageCache cache(1 << 20);
  const auto old_image = make_image(1, 1000);
  insert(cache, 7, old_image);
  cache.invalidate(7);

  // The row id now belongs to another entry, whose row (as a crafted XXH3 collision would) carries
  // the old image's checksum and size: nothing may be served for it from the cache.
  CHECK(cache.find(7, checksum_of(old_image), old_image->size()) == nullptr);
  CHECK(cache.stats().entries == 0);
  CHECK(cache.stats().bytes == 0);

  const auto new_image = make_image(2, 1000);
  insert(cache, 7, new_image);
  CHECK(serves(cache, 7, new_image));
}

TEST_CASE("hot image cache: an image read before an invalidation is not cached") {
  HotImageCache cache(1 << 20);
  const auto image = make_image(1, 1000);
  const std::uint64_t ticket = cache.read_ticket();  // a lookup starts its read transaction
  cache.invalidate(7);                               // a write commits meanwhile

  cache.insert(7, checksum_of(image), image, ticket);
  CHECK_FALSE(serves(cache, 7, image));
  CHECK(cache.stats().entries == 0);

  // The next lookup, which started after the write, may cache it.
  insert(cache, 7, image);
  CHECK(serves(cache, 7, image));
}

TEST_CASE(
    "hot image cache: many threads finding, inserting and invalidating keep the budget and serve only matching images") {
  constexpr std::int64_t k_ids = 12;
  constexpr int k_versions = 8;
  constexpr std::uint64_t k_budget = 8 * (4096 + k_overhead);
  HotImageCache cache(k_budget);
  // One image per (id, version), each with its own fill byte and so its own checksum.
  std::vector<std::vector<HotImageCache::Image>> images(k_ids);
  for (std::int64_t id = 0; id < k_ids; ++id) {
    for (int version = 0; version < k_versions; ++version) {
      images[static_cast<std::size_t>(id)].push_back(
          make_image(static_cast<std::uint8_t>(id * k_versions + version),
                     1024 + static_cast<std::size_t>((id + version) % 4) * 1024));
    }
  }

  std::atomic<int> wrong{0};
  std::atomic<int> over_budget{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int op = 0; op < 4000; ++op) {
        const std::int64_t id = (op * 5 + t) % k_ids;
        const int version = (op / 500) % k_versions;  // the "current row" of every id changes now and then
        const auto& image = images[static_cast<std::size_t>(id)][static_cast<std::size_t>(version)];
        if (t == 0 && op % 4 == 0) {
          cache.invalidate(id);  // a write
        } else {
          // A lookup, as SqliteStore does it: ticket, find, else read and insert.
          const std::uint64_t ticket = cache.read_ticket();
          if (auto found = cache.find(id, checksum_of(image), image->size())) {
            if (found != image) ++wrong;
          } else {
            cache.insert(id, checksum_of(image), image, ticket);
          }
        }
        if (cache.stats().bytes > k_budget) ++over_budget;
      }
    });
  }
  for (auto& thread : threads) thread.join();

  CHECK(wrong == 0);
  CHECK(over_budget == 0);
  const auto stats = cache.stats();
  CHECK(stats.bytes <= k_budget);
  CHECK(stats.hits > 0);
  CHECK(stats.hits + stats.misses == 5 * 4000 + 4000 * 3 / 4);
}

namespace {

proto::Digest256 selector_id(std::uint8_t fill) {
  proto::Digest256 id;
  id.bytes.fill(fill);
  return id;
}

void remember(HotImageCache& cache, bool by_fast_key, std::uint8_t selector, std::int64_t row,
              const HotImageCache::Image& image, std::uint64_t ticket) {
  auto info = std::make_shared<proto::EntryInfo>();
  info->raw_size = image->size();
  cache.remember_hit(by_fast_key, selector_id(selector), row, checksum_of(image), info, proto::Checksum128{}, ticket);
}

}  // namespace

TEST_CASE("hot image cache: a remembered hit is answered by its selector until its row changes") {
  HotImageCache cache(1 << 20);
  const auto image = make_image(1, 4096);
  insert(cache, 7, image);
  remember(cache, true, 0xAA, 7, image, cache.read_ticket());
  remember(cache, false, 0xBB, 7, image, cache.read_ticket());

  auto by_fast = cache.find_hit(true, selector_id(0xAA));
  REQUIRE(by_fast.has_value());
  CHECK(by_fast->image == image);
  CHECK(by_fast->row_id == 7);
  CHECK(by_fast->info->raw_size == 4096);
  CHECK(cache.find_hit(false, selector_id(0xBB)).has_value());
  CHECK_FALSE(cache.find_hit(false, selector_id(0xAA)).has_value());  // the kind is part of the selector

  SECTION("a new shared row with the fast key forgets that selector only") {
    cache.forget_selector(true, selector_id(0xAA));
    CHECK_FALSE(cache.find_hit(true, selector_id(0xAA)).has_value());
    CHECK(cache.find_hit(false, selector_id(0xBB)).has_value());
  }
  SECTION("a failure report forgets the row's hits and keeps its image") {
    cache.forget_hits_of(7);
    CHECK_FALSE(cache.find_hit(true, selector_id(0xAA)).has_value());
    CHECK_FALSE(cache.find_hit(false, selector_id(0xBB)).has_value());
    CHECK(serves(cache, 7, image));
  }
  SECTION("a replaced or deleted row forgets everything") {
    cache.invalidate(7);
    CHECK_FALSE(cache.find_hit(true, selector_id(0xAA)).has_value());
    CHECK_FALSE(cache.find_hit(false, selector_id(0xBB)).has_value());
  }
  SECTION("an evicted image takes its hits with it") {
    for (std::int64_t row = 100; row < 400; ++row) insert(cache, row, make_image(2, 4096));
    CHECK_FALSE(serves(cache, 7, image));
    CHECK_FALSE(cache.find_hit(true, selector_id(0xAA)).has_value());
  }
}

TEST_CASE("hot image cache: a hit read before an invalidation, or for an image not cached, is not remembered") {
  HotImageCache cache(1 << 20);
  const auto image = make_image(3, 4096);
  insert(cache, 9, image);
  const std::uint64_t before = cache.read_ticket();
  cache.forget_selector(true, selector_id(0x01));  // a write elsewhere, committed after the read began
  remember(cache, true, 0xCC, 9, image, before);
  CHECK_FALSE(cache.find_hit(true, selector_id(0xCC)).has_value());

  remember(cache, true, 0xCC, 10, image, cache.read_ticket());  // row 10 has no cached image
  CHECK_FALSE(cache.find_hit(true, selector_id(0xCC)).has_value());
  const auto other = make_image(4, 4096);
  remember(cache, true, 0xCC, 9, other, cache.read_ticket());  // not the checksum cached for row 9
  CHECK_FALSE(cache.find_hit(true, selector_id(0xCC)).has_value());
}
