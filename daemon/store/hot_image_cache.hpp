// HotImageCache: the verified images of recently served entries, kept in memory so that a LOOKUP
// hit on one of them neither reads its blob from SQLite nor hashes it again. Least recently used
// first out, within a byte budget (config key hot_cache_size). SqliteStore owns one.
//
// Keyed by the entries row id, and an image is served only for the exact checksum and raw size it
// was verified against, which the caller reads from the row in the same snapshot.
// Rationale: never keyed by checksum alone. XXH3-128 is fast, not collision-resistant: a tenant
// could craft an image with the checksum of another tenant's entry, and a checksum-keyed cache
// would then serve the crafted bytes for the other entry (docs/cache-key.md
// "Why SHA-256 for content, XXH3-128 only for checksums"). A row id belongs to one
// (key id, namespace) at a time; the checksum and size only guard against a row that changed.
//
// Invalidation contract (SqliteStore keeps it): after committing any write that changes or deletes
// a row's image, the writer calls invalidate(id) before it lets go of the writer lock, so a row id
// freed by a DELETE cannot be reused by the next INSERT while its old image is still cached. A
// reader takes read_ticket() before its read transaction starts and hands it to insert(): an
// insert is refused when any invalidation ran since, because the image may then come from a
// snapshot older than the write that invalidated it.
//
// Thread safety: every method may be called from any thread. One mutex guards the map and the LRU
// list; it is held for a hash-map and list update only, never while hashing, calling SQLite or
// freeing an image (evicted images are released after it is dropped).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <proto/digest.hpp>

#include <daemon/store/image_buffer.hpp>

namespace jitcache::daemon::store {

struct HotImageCacheStats {
  std::uint64_t hits = 0;     // find() served a cached image
  std::uint64_t misses = 0;   // find() found nothing usable (also every find() while disabled)
  std::uint64_t bytes = 0;    // charged now: image bytes plus k_entry_overhead_bytes per entry
  std::uint64_t entries = 0;  // images cached now
};

class HotImageCache {
 public:
  using Image = std::shared_ptr<const ImageBuffer>;

  // Rationale: each entry is charged for its bookkeeping as well as its bytes, so that the budget
  // also bounds how many entries tiny images could make (a list node, a map slot and a shared_ptr
  // control block come to about this much).
  static constexpr std::uint64_t k_entry_overhead_bytes = 256;

  // 0 disables the cache: find() always misses and insert() keeps nothing.
  explicit HotImageCache(std::uint64_t budget_bytes);

  HotImageCache(const HotImageCache&) = delete;
  HotImageCache& operator=(const HotImageCache&) = delete;

  std::uint64_t budget_bytes() const { return m_budget; }

  // The image of row `id` if it is cached for exactly this checksum and raw size; it becomes the
  // most recently used. Counts a hit or a miss.
  Image find(std::int64_t id, const proto::Checksum128& checksum, std::uint64_t raw_size);

  // Take before the read transaction that reads the row and its image begins.
  std::uint64_t read_ticket() const;

  // Caches `image`, verified against `checksum`, as row `id`'s, replacing what was cached for the
  // row, and evicts the least recently used images until the budget holds. Does nothing when an
  // invalidation ran after `ticket` was taken, or when the image alone is over the budget.
  void insert(std::int64_t id, const proto::Checksum128& checksum, Image image, std::uint64_t ticket);

  // Drops row `id`'s image, if cached. The writer calls it after every write that replaces or
  // deletes a row, under the writer lock (see the contract above).
  void invalidate(std::int64_t id);
  // Drops every image: the row ids they were cached under now name other entries (the store's
  // database was replaced, recovering_database.hpp). Hits and misses keep counting.
  void invalidate_all();

  HotImageCacheStats stats() const;

 private:
  struct Slot {
    std::int64_t id = 0;
    proto::Checksum128 checksum;
    Image image;
    std::uint64_t charge = 0;
  };
  using Lru = std::list<Slot>;  // most recently used first

  // Moves the evicted images into `released`, to be freed once the mutex is dropped.
  void evict_locked(Lru& released);

  const std::uint64_t m_budget;
  mutable std::mutex m_mutex;
  Lru m_lru;
  std::unordered_map<std::int64_t, Lru::iterator> m_by_id;
  std::uint64_t m_bytes = 0;
  std::uint64_t m_invalidations = 0;  // the ticket: bumped by every invalidate()
  std::uint64_t m_hits = 0;
  std::uint64_t m_misses = 0;
};

}  // namespace jitcache::daemon::store
