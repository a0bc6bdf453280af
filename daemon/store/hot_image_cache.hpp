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
// Answered hits. A cached image may also remember the LOOKUPs it answered, by key id or fast key id,
// with the entry's metadata: the next LOOKUP by either is then answered from memory with no SQLite
// read at all (find_hit), the way Redis answers a GET (docs/benchmarks.md "The hit path at the
// limit"). Only a hit that is every caller's answer is remembered: a live shared-namespace row with
// no failure report, found first for its selector (a shared row comes before any uid's own). What
// could change that answer forgets it: the row replaced, deleted or quarantined (invalidate), a
// failure report on it (forget_hits_of), a usage flush, which moves the hits and last use a
// remembered entry carries (forget_all_hits), and a new shared row with the same fast key, which a
// LOOKUP by fast key would then serve instead (forget_selector). Each of those also moves the
// ticket, so a reader whose snapshot predates them cannot remember what it read. A remembered hit
// lives and dies with its image: the byte budget and the LRU order bound both.
//
// Thread safety: every method may be called from any thread. One mutex guards the maps and the LRU
// list; it is held for a hash-map and list update only, never while hashing, calling SQLite,
// copying metadata or freeing an image (evicted images are released after it is dropped).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <optional>
#include <vector>

#include <proto/digest.hpp>
#include <proto/messages.hpp>

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

  // What find_hit answers: the served entry's metadata, its verified image, its row.
  struct RememberedHit {
    std::shared_ptr<const proto::EntryInfo> info;
    Image image;
    std::int64_t row_id = 0;
    proto::Checksum128 content_fast;
  };

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

  // The hit a LOOKUP by this key id (by_fast_key false) or fast key id found before, if its image
  // is still cached; it becomes the most recently used and counts as a hit. Nothing is counted
  // when there is none: the caller then reads the row and calls find().
  std::optional<RememberedHit> find_hit(bool by_fast_key, const proto::Digest256& id);

  // Remembers that a LOOKUP by this selector served row `row_id` (whose image is cached for
  // `checksum`) with `info`: only for a hit that is every caller's answer (see above). Does nothing
  // when the image is not cached for that checksum or an invalidation ran after `ticket`.
  void remember_hit(bool by_fast_key, const proto::Digest256& id, std::int64_t row_id,
                    const proto::Checksum128& checksum, std::shared_ptr<const proto::EntryInfo> info,
                    const proto::Checksum128& content_fast, std::uint64_t ticket);

  // A LOOKUP by this selector may now have another answer (a new shared row with this fast key).
  void forget_selector(bool by_fast_key, const proto::Digest256& id);
  // Row `id` is no longer every caller's answer (a failure report hides it from its reporter);
  // its image stays cached.
  void forget_hits_of(std::int64_t id);
  // Every remembered hit (the usage flush moved the hit counts they carry); images stay cached.
  void forget_all_hits();

  // Drops row `id`'s image, if cached. The writer calls it after every write that replaces or
  // deletes a row, under the writer lock (see the contract above).
  void invalidate(std::int64_t id);
  // Drops every image: the row ids they were cached under now name other entries (the store's
  // database was replaced, recovering_database.hpp). Hits and misses keep counting.
  void invalidate_all();

  HotImageCacheStats stats() const;

 private:
  struct SelectorKey {
    bool by_fast_key = false;
    proto::Digest256 id;
    bool operator==(const SelectorKey&) const = default;
  };
  struct SelectorHash {
    std::size_t operator()(const SelectorKey& key) const;
  };
  struct Slot {
    std::int64_t id = 0;
    proto::Checksum128 checksum;
    Image image;
    std::uint64_t charge = 0;
    // What remember_hit() recorded for this row: its metadata and the selectors it answers.
    std::shared_ptr<const proto::EntryInfo> info;
    proto::Checksum128 content_fast;
    std::vector<SelectorKey> selectors;
  };
  using Lru = std::list<Slot>;  // most recently used first

  // Moves the evicted images into `released`, to be freed once the mutex is dropped.
  void evict_locked(Lru& released);
  // Takes a slot out of the LRU list and every map, into `released`.
  void release_locked(Lru::iterator slot, Lru& released);
  void forget_selectors_locked(Slot& slot);

  const std::uint64_t m_budget;
  mutable std::mutex m_mutex;
  Lru m_lru;
  std::unordered_map<std::int64_t, Lru::iterator> m_by_id;
  std::unordered_map<SelectorKey, Lru::iterator, SelectorHash> m_by_selector;
  std::uint64_t m_bytes = 0;
  std::uint64_t m_invalidations = 0;  // the ticket: bumped by every invalidate()
  std::uint64_t m_hits = 0;
  std::uint64_t m_misses = 0;
};

}  // namespace jitcache::daemon::store
