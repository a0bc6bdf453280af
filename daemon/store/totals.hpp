// Totals: the store's figures for STATS and the metrics endpoint — what the file holds and what the
// store counted in memory since it was opened. Part of the serving core (store.hpp Store::totals).
// Thread safety: a value type.
#pragma once

#include <cstdint>

namespace jitcache::daemon::store {

struct Totals {
  std::uint64_t entries = 0;
  std::uint64_t bytes_raw = 0;
  std::uint64_t bytes_stored = 0;
  std::uint64_t entries_quarantined = 0;  // now, in every namespace
  std::uint64_t corrupt_entries = 0;      // removed since open because their checksum failed
  // The in-memory cache of recently served images (SqliteStore: hot_image_cache.hpp); all 0 for a
  // store without one. Hits and misses count lookups of live entries since open.
  std::uint64_t hot_cache_hits = 0;
  std::uint64_t hot_cache_misses = 0;
  std::uint64_t hot_cache_bytes = 0;
  std::uint64_t hot_cache_entries = 0;
  // Capacity (eviction.hpp): the limit, and what eviction (by PUTs and GC) removed since open.
  std::uint64_t max_size = 0;  // 0: no limit
  std::uint64_t evictions = 0;
  std::uint64_t evicted_bytes = 0;  // stored bytes
  // Entries evicted from an untrusted uid's namespace to keep it within namespace_quota (not
  // counted in evictions, which are the store-wide limit's).
  std::uint64_t quota_evictions = 0;
  // Times the database was found corrupt while the daemon ran, set aside and replaced by an empty
  // one (recovering_database.hpp); the counters above then carry on across the new database.
  std::uint64_t store_resets = 0;
  // Times the database's files were deleted or replaced under the running daemon, noticed and the
  // store reopened on the file now at its path (recovering_database.hpp); counted apart from
  // store_resets, which are corruption.
  std::uint64_t store_reopens = 0;
  // Usage kept in memory for the next flush (hit counts of entries, uses of drivers), and the
  // records dropped since open because that was full (usage_log.hpp, driver_log.hpp).
  std::uint64_t usage_pending = 0;
  std::uint64_t usage_dropped = 0;
  // Sources kept for the daemon's own compiles (sources.hpp, config key source_budget): how many,
  // their compressed bytes, and the ones dropped since open to stay within the budget.
  std::uint64_t sources = 0;
  std::uint64_t source_bytes = 0;
  std::uint64_t sources_dropped = 0;
};

}  // namespace jitcache::daemon::store
