// What eviction removed, as it was: the key fields, sizes, hits and compile time of each entry,
// read just before its row is deleted, so that `jitcache explain` and `jitcache misses` can say
// when and why a key's entry went (EvictionResult::evicted, the store's eviction ring:
// recent_evictions.hpp). Eviction's order of candidates is eviction.cpp's and namespace_quota.cpp's
// business; each calls remove_evicted_entry where it deletes a row, and nothing else changes.
//
// Thread safety: a free function over the writer connection the caller holds exclusively.
#pragma once

#include <cstdint>
#include <vector>

#include <common/result.hpp>

#include <daemon/store/eviction.hpp>
#include <daemon/store/sqlite_db.hpp>

namespace jitcache::daemon::store {

// Reads row `id`'s key fields, deletes the row (remove_entry), and when the delete removed it
// appends its EvictedEntry (evicted_at_ms 0: the store stamps it after the commit) to `evicted`.
// writer.changes() afterwards is the delete's, as after remove_entry.
Result<void> remove_evicted_entry(SqliteDb& writer, std::int64_t id, EvictionReason reason,
                                  std::vector<EvictedEntry>& evicted);

}  // namespace jitcache::daemon::store
