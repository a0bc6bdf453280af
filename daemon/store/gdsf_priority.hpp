// The GreedyDual-Size-Frequency priority of an entry (config key eviction_policy = "gdsf"): what
// keeping it is worth, in compile seconds its hits may spare per megabyte it takes, aged by the
// store's inflation value L:
//
//     priority = L + (min(hits, 7) + 1) * compile_cost_us / max(stored_size, 1)
//
// (microseconds per stored byte, i.e. seconds per MB). Eviction takes the lowest priority first and
// then raises L to the priority of the last entry it took (eviction_inflation, schema/0008), so an
// entry written or hit after an eviction starts above everything that eviction left and was not hit
// since: a once-hot entry that nobody asks for any more sinks below the new ones and goes in the
// end, however many hits it had. A hit sets its entry's priority again from the current L (at the
// usage flush, sqlite_store_capacity.cpp); writing an entry sets it with hits 0.
//
// Only the gdsf order raises L: entries of stale drivers and of a namespace over its quota are
// evicted for other reasons than their worth, and would make L jump. The priority is kept under
// either order, so switching eviction_policy takes effect at the next eviction.
//
// Thread safety: free functions; the database ones over a connection the caller holds exclusively.
#pragma once

#include <cstdint>
#include <string>

#include <common/result.hpp>
#include <daemon/store/sqlite_db.hpp>

namespace jitcache::daemon::store {

// Rationale: 100 ms for an entry whose compile time nobody measured (compile_time_us 0: `jitcache
// put` without a time, an image produced elsewhere): more than the small corpus kernel takes
// (14-47 ms, docs/benchmarks.md), less than a mid-sized module (0.4-0.6 s), so such entries neither
// push out the measured expensive ones nor outlast the measured trivial ones.
inline constexpr std::uint64_t k_unknown_compile_cost_us = 100'000;
// Rationale: a recorded time below 1 ms (a timer's granularity, a re-put of a cubin) counts as 1 ms,
// so that no entry's worth is ~0 and its hits still count.
inline constexpr std::uint64_t k_min_compile_cost_us = 1'000;
// Rationale: 120 s, the longest compile the daemon itself lets run (compile_wall_time's default).
// A PUT may claim any compile_time_us; an untrusted uid would otherwise pin its entries against
// the store-wide eviction by claiming hours.
inline constexpr std::uint64_t k_max_compile_cost_us = 120'000'000;
// Rationale: hits count up to 7 (a frequency of at most 8). Past a few hits a count tells more
// about the past than about the future, and an uncapped one lets an entry hit 500 times before its
// program was rebuilt outlive its use for hundreds of evictions, until L has climbed that far. On
// the corpus trace with churn (docs/benchmarks.md "Eviction policy") uncapped counts saved 3.6%
// fewer compile seconds than lru at half the working set, a cap of 15 1.2% fewer, a cap of 7 0.2%
// more; the synthetic trace moved by under 0.3%.
inline constexpr std::uint64_t k_max_counted_hits = 7;

// Rationale: an entry outside the shared namespace was PUT by an untrusted uid, and its
// compile_time_us is that uid's claim: it counts at most k_unknown_compile_cost_us, what an entry
// whose time nobody measured counts. A claim may lower its own entry's worth, never raise it above
// shared work the daemon measured (docs/security.md "Who pays for what"): 19 entries claiming
// 2^63-1 us otherwise ranked above every shared entry and displaced 12 of 30 of them.
inline constexpr std::uint64_t k_max_claimed_compile_cost_us = k_unknown_compile_cost_us;

// The compile time an entry's priority counts: compile_time_us within the bounds above, or the
// default when it is 0; in an untrusted uid's namespace (`namespace_id` not 0), at most
// k_max_claimed_compile_cost_us.
std::uint64_t compile_cost_us(std::uint64_t compile_time_us, std::uint32_t namespace_id = 0);

// The frequency: min(hits, k_max_counted_hits) + 1.
// The formula, for C++ callers (tests, the eviction benchmark); the SQL below computes the same
// doubles in the same order.
double gdsf_priority(double inflation, std::uint64_t hits, std::uint64_t compile_time_us, std::uint64_t stored_size,
                     std::uint32_t namespace_id = 0);

// The formula as an SQL expression over an `entries` row (unaliased), with the inflation value
// and the hit count as the given SQL expressions (a parameter, `hits`, `hits + ?1`).
std::string gdsf_priority_sql(std::string_view inflation, std::string_view hits);

// L: one row (schema/0008_eviction_priority.sql).
Result<double> read_inflation(SqliteDb& db);
// Raises L to `value` (never lowers it), within the caller's transaction.
Result<void> raise_inflation(SqliteDb& writer, double value);

// Gives every entry without a priority (written by an older jitcached, or by code that left it
// NULL) the one it would have had when written: with L as it is now, which no write changes. A
// probe of entries_by_priority when there are none. Within the caller's transaction.
Result<void> fill_missing_priorities(SqliteDb& writer, double inflation);

}  // namespace jitcache::daemon::store
