// The per-uid quota (config key namespace_quota, docs/security.md "Limits"): what one untrusted
// uid's own namespace may take, counted as its stored image bytes plus k_entry_overhead_bytes per
// entry (namespace_charge). A PUT that would take its namespace over the quota first
// evicts that namespace's own least recently used entries, down to the low-water mark
// (eviction.hpp) less the incoming image; no other namespace loses anything for it.
//
// Rationale: eviction within the namespace rather than a refusal, so a tenant whose programs keep
// changing is never stuck with old images it can no longer replace; a tenant still cannot grow its
// share of the store past the quota, and so cannot push the shared entries out by filling it.
//
// Rationale: an entry costs the store more than its image: its row (key id, digests, checksum,
// key strings, producer), its entries in the indexes and its blob row. Measured with
// tests/bench/bench_tenant_attack.cpp ("entry rows", docs/benchmarks.md "Tenants under attack"):
// 603 bytes of database per entry for the row and index entries alone; 1 KiB per entry covers the
// blob row and longer option strings and driver builds. Counting image bytes alone let one uid
// store 200 000 tiny entries "within" a 40 MB quota that took 156 MB of database.
//
// Thread safety: free functions over a connection the caller holds exclusively.
#pragma once

#include <cstdint>

#include <daemon/store/eviction.hpp>
#include <daemon/store/sqlite_db.hpp>

namespace jitcache::daemon::store {

inline constexpr std::uint64_t k_entry_overhead_bytes = 1024;

// What one entry of `stored_bytes` counts against its namespace's quota.
inline std::uint64_t quota_charge(std::uint64_t stored_bytes) { return stored_bytes + k_entry_overhead_bytes; }

// What a namespace counts against its quota: namespace_totals.bytes_stored plus
// k_entry_overhead_bytes per entry (0 when it holds nothing): one row.
Result<std::uint64_t> namespace_charge(SqliteDb& db, std::uint32_t namespace_id);

// Evicts the namespace's own entries, least recently used first, until `to_free` is freed (each
// entry freeing its stored bytes, plus k_entry_overhead_bytes with `count_overhead`) or none is
// left, within the caller's IMMEDIATE transaction. The quota uses it, and so does a PUT of an
// untrusted uid when the store is over max_size: that uid's size pressure evicts its own entries
// before anyone else's (sqlite_store_write.cpp, docs/security.md "Who pays for what").
Result<EvictionResult> evict_from_namespace(SqliteDb& writer, std::uint32_t namespace_id, std::uint64_t to_free,
                                            EvictionReason reason, bool count_overhead);

// Evicts within the caller's IMMEDIATE transaction. Does nothing when the namespace has room.
// `incoming_charge`: what is about to be written counts (quota_charge of each entry).
Result<EvictionResult> evict_over_quota(SqliteDb& writer, std::uint32_t namespace_id, std::uint64_t quota_bytes,
                                        std::uint64_t incoming_charge);

}  // namespace jitcache::daemon::store
