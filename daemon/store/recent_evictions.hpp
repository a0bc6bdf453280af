// The store's eviction ring: the last k_recent_evictions entries eviction removed (by max_size, a
// stale driver or a namespace quota), with their key fields, for `jitcache explain` (a key whose
// entry was evicted: when and why) and `jitcache misses`.
//
// Rationale: memory, not the database. The records answer "what happened lately", are worth
// nothing after a restart that a LIST would not show, and a write per eviction would add to the
// transaction eviction exists to keep short. 1024 records of ~1.2 KiB at most (the key's options
// dominate) bound it near 1.2 MiB whatever the store holds. The ring is shared by every namespace;
// once full, one namespace keeps at most a quarter of it (common/fair_share_ring.hpp), so a tenant
// evicting its own entries over its quota cannot push the shared namespace's records out.
//
// Thread safety: every method may be called from any thread (one mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include <common/fair_share_ring.hpp>
#include <proto/digest.hpp>

#include <daemon/store/eviction.hpp>

namespace jitcache::daemon::store {

inline constexpr std::size_t k_recent_evictions = 1024;
inline constexpr std::size_t k_recent_evictions_per_namespace = k_recent_evictions / 4;

class RecentEvictions {
 public:
  RecentEvictions() : m_ring(k_recent_evictions, k_recent_evictions_per_namespace) {}

  // The entries one eviction removed, stamped `now_ms` (after its commit).
  void record(const std::vector<EvictedEntry>& evicted, std::int64_t now_ms);
  // Newest first, at most `limit`: every namespace for `all_namespaces`, else the shared one and
  // `own_namespace`.
  std::vector<EvictedEntry> newest(std::size_t limit, bool all_namespaces, std::uint32_t own_namespace) const;
  // The records of `key_id`, newest first, in any namespace (the caller decides what to show).
  std::vector<EvictedEntry> of_key(const proto::Digest256& key_id) const;

 private:
  mutable std::mutex m_mutex;
  common::FairShareRing<EvictedEntry> m_ring;
};

}  // namespace jitcache::daemon::store
