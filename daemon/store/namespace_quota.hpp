// The per-uid quota (config key namespace_quota, docs/security.md "Limits"): the stored bytes one
// untrusted uid's own namespace may hold. A PUT that would take its namespace over the quota first
// evicts that namespace's own least recently used entries, down to the low-water mark
// (eviction.hpp) less the incoming image; no other namespace loses anything for it.
//
// Rationale: eviction within the namespace rather than a refusal, so a tenant whose programs keep
// changing is never stuck with old images it can no longer replace; a tenant still cannot grow its
// share of the store past the quota, and so cannot push the shared entries out by filling it.
//
// Thread safety: free functions over a connection the caller holds exclusively.
#pragma once

#include <cstdint>

#include <daemon/store/eviction.hpp>
#include <daemon/store/sqlite_db.hpp>

namespace jitcache::daemon::store {

// namespace_totals.bytes_stored of one namespace (0 when it holds nothing): one row.
Result<std::uint64_t> namespace_bytes(SqliteDb& db, std::uint32_t namespace_id);

// Evicts within the caller's IMMEDIATE transaction. Does nothing when the namespace has room.
Result<EvictionResult> evict_over_quota(SqliteDb& writer, std::uint32_t namespace_id, std::uint64_t quota_bytes,
                                        std::uint64_t incoming_bytes);

}  // namespace jitcache::daemon::store
