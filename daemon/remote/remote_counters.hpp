// The figures of one remote of the fleet tier (docs/operations.md "A fleet"): what its lookups
// found, how it failed, what its checks rejected, what went up, the leases and the sampled
// re-verifications. STATS reports them as remote<i>.<name> (i: the remote's place in the `remote`
// list) and the metrics endpoint as jitcache_remote_* {remote="<i>"}; both read them through
// remote_figures.hpp, so the names are in one place.
// Thread safety: every field is an atomic updated with relaxed ordering from any thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

#include <common/result.hpp>

#include <daemon/remote/record/rejection.hpp>

namespace jitcache::daemon::remote {

// The error kinds a backend reports (remote_backend.hpp), as counted: errors.<name>.
inline constexpr std::array<std::pair<common::ErrorCode, std::string_view>, 7> k_remote_error_kinds{{
    {common::ErrorCode::timeout, "timeout"},
    {common::ErrorCode::unavailable, "unavailable"},
    {common::ErrorCode::forbidden, "forbidden"},
    {common::ErrorCode::corrupt, "garbage"},
    {common::ErrorCode::io, "server"},
    {common::ErrorCode::too_large, "too_large"},
    {common::ErrorCode::unsupported, "unsupported"},
}};

// Remote call latency, fixed buckets from 100 us to 10 s (jitcache_remote_duration_seconds).
struct RemoteLatencyBucket {
  std::uint64_t upper_us;
  std::string_view le;
};
inline constexpr std::array<RemoteLatencyBucket, 14> k_remote_latency_buckets{{
    {100, "0.0001"},
    {250, "0.00025"},
    {500, "0.0005"},
    {1'000, "0.001"},
    {2'500, "0.0025"},
    {5'000, "0.005"},
    {10'000, "0.01"},
    {25'000, "0.025"},
    {50'000, "0.05"},
    {100'000, "0.1"},
    {250'000, "0.25"},
    {1'000'000, "1"},
    {2'500'000, "2.5"},
    {10'000'000, "10"},
}};

struct RemoteCounters {
  using Counter = std::atomic<std::uint64_t>;

  Counter lookups{0};        // local misses asked of this remote
  Counter hits{0};           // of those, entries that passed every check and were stored locally
  Counter misses{0};         // of those, no record under the key
  Counter skipped{0};        // lookups and uploads not tried because the breaker was open
  Counter bytes_read{0};     // record and image bytes received
  Counter bytes_written{0};  // record, image and source bytes sent
  Counter uploads{0};        // entries whose record went up
  Counter upload_failures{0};
  Counter upload_drops{0};         // entries not queued: the upload queue was full
  Counter leases_won{0};           // compiles this host ran under a fleet lease it took
  Counter leases_waited{0};        // compiles that waited for another host's lease
  Counter lease_waits_served{0};   // of those, answered by the entry the holder uploaded
  Counter lease_waits_expired{0};  // of those, that compiled here after the wait (holder gone or slow)
  Counter verify_samples{0};       // remote hits recompiled here and compared
  Counter verify_mismatches{0};    // of those, different bytes: quarantined here
  Counter verify_skipped{0};       // sampled but not comparable (no source, another toolkit, a link)
  Counter breaker_opens{0};        // times the breaker opened
  // The remote heals (healer.hpp).
  Counter wants_sent{0};  // consumer: keys it found in no remote, noted in the wants queue
  Counter heals{0};       // builder: entries it held locally and uploaded again
  // Compile asks (ask_desk.hpp).
  Counter asks_sent{0};     // consumer: keys it asked the builders to compile for it
  Counter asks_taken{0};    // builder: asks it took the lease for and handed to its compile service
  Counter asks_refused{0};  // builder: asks that failed a check (too long, malformed, digest mismatch)
  Counter asks_skipped{0};  // builder: sound asks left (leased, held or taken already, expired)
  std::array<Counter, k_remote_error_kinds.size()> errors{};                   // by kind
  std::array<Counter, k_rejection_count> rejections{};                         // by reason (rejection.hpp)
  std::array<Counter, k_remote_latency_buckets.size() + 1> latency_buckets{};  // not cumulative; last: over
  Counter latency_sum_us{0};

  static void add(Counter& c, std::uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }
  void count_error(common::ErrorCode code);
  void count_rejection(Rejection reason) { add(rejections[static_cast<std::size_t>(reason)]); }
  void record_latency(std::chrono::microseconds elapsed);
  std::uint64_t errors_total() const;
};

}  // namespace jitcache::daemon::remote
