// Eviction: which entries go when the store is over its byte limit (max_size), and the removal of
// entries keyed to drivers no client asks for any more (stale_driver_after). SqliteStore runs it
// on its writer connection, under its writer mutex, after writing the usage kept in memory, so the
// last-use times and priorities it orders by include every hit so far (docs/architecture.md
// "Capacity and eviction").
//
// Order: entries of stale drivers first (oldest last use first), then every entry in the policy's
// order (EvictionOrder): gdsf, the lowest GreedyDual-Size-Frequency priority first
// (gdsf_priority.hpp), after which L is raised to the last one taken; lru, by last use, oldest first.
// Ties by row id, i.e. oldest written first. Quarantined entries count towards the size and are
// evicted in the same order as live ones.
//
// Rationale: eviction stops at a low-water mark (k_low_water_percent of max_size) rather than at
// max_size itself, so a store at its limit evicts once per few percent of new bytes, in one
// transaction, instead of on every PUT.
//
// Thread safety: a free function over a connection the caller holds exclusively.
#pragma once

#include <cstdint>
#include <vector>

#include <common/result.hpp>
#include <proto/key.hpp>

#include <daemon/store/eviction_order.hpp>
#include <daemon/store/sqlite_db.hpp>

namespace jitcache::daemon::store {

inline constexpr std::uint64_t k_low_water_percent = 90;

struct EvictionPolicy {
  std::uint64_t max_size_bytes = 0;        // 0: no limit
  std::int64_t stale_driver_after_ms = 0;  // 0: no driver is ever stale
  EvictionOrder order = EvictionOrder::gdsf;
};

// Why an entry was evicted (`jitcache explain`, the eviction ring: MISSES).
enum class EvictionReason : std::uint8_t {
  size = 1,          // the store was over max_size
  stale_driver = 2,  // its driver no client asked for within stale_driver_after
  quota = 3,         // its namespace was over namespace_quota
};

// One evicted entry as it was: its key fields, so a later miss of the key can say why.
struct EvictedEntry {
  proto::Digest256 key_id;
  std::uint32_t namespace_id = 0;
  proto::KeyFields key;
  std::uint64_t stored_bytes = 0;
  std::uint64_t hits = 0;
  std::uint64_t compile_time_us = 0;
  std::int64_t evicted_at_ms = 0;
  EvictionReason reason = EvictionReason::size;
};

struct EvictionRequest {
  // Bytes about to be written (a PUT's image): room is made for them as well.
  std::uint64_t incoming_bytes = 0;
  // GC: every entry of a stale driver goes, whether or not the store is over its limit.
  bool all_stale = false;
};

struct EvictionResult {
  std::vector<std::int64_t> removed_ids;  // their cached images must be dropped
  std::uint64_t removed_bytes = 0;        // stored bytes
  std::uint64_t stale_entries = 0;        // of the removed, those of a stale driver
  std::vector<EvictedEntry> evicted;      // the removed, one each, in removed_ids' order
};

// The low-water mark for a limit: what eviction brings the store down to.
std::uint64_t low_water_bytes(std::uint64_t max_size_bytes);

// The SQL condition on an `entries` row (FROM entries, unaliased) that its driver is stale: asked
// for last before ?12, which the caller binds to now - stale_driver_after. LIST --stale uses it;
// eviction's stale pass selects the same entries through a join.
extern const char k_stale_condition_sql[];

// Makes `drivers` hold exactly the drivers of the entries (schema/0006_drivers_of_entries.sql keeps
// it so from then on): every driver of an entry gets a row, as last asked for when its newest entry
// was last used, without touching the rows there are, and a row of no entry is deleted. Entries
// written by an older jitcached (schema 3 or before, which ignores the table) would otherwise never
// go stale, and rows an older jitcached added for drivers only asked for (schema 5 or before) would
// stay for ever. Run at open: an index-only scan of entries_by_driver and a probe of it per row.
Result<void> sync_drivers(SqliteDb& writer);

// totals.bytes_stored: one row, whatever the size of the store.
Result<std::uint64_t> stored_bytes(SqliteDb& db);

// Whether a write of `incoming_bytes` onto `bytes` needs eviction first.
inline bool over_limit(const EvictionPolicy& policy, std::uint64_t bytes, std::uint64_t incoming_bytes) {
  return policy.max_size_bytes != 0 && bytes + incoming_bytes > policy.max_size_bytes;
}

// Deletes one entry (its image and failure reports go with it); writer.changes() says whether it
// was still there.
Result<void> remove_entry(SqliteDb& writer, std::int64_t id);

// Evicts within the caller's IMMEDIATE transaction. Does nothing when neither the limit nor
// `request.all_stale` calls for it.
Result<EvictionResult> evict(SqliteDb& writer, const EvictionPolicy& policy, const EvictionRequest& request,
                             std::int64_t now_ms);

}  // namespace jitcache::daemon::store
