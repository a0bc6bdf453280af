// What a Redis backend counts about itself, for the tier's STATS and for tests that must show a
// path was taken (a MOVED followed, a stale connection replaced). Counted since the backend was
// made; never reset.
// Thread safety: RedisCounterCells is updated from any thread (relaxed atomics); a RedisCounters
// is a plain copy of them.
#pragma once

#include <atomic>
#include <cstdint>

namespace jitcache::daemon::remote {

struct RedisCounters {
  std::uint64_t connections_opened = 0;     // connected and logged in
  std::uint64_t connections_discarded = 0;  // broken by a failed exchange, never returned to a pool
  std::uint64_t stale_retries = 0;          // a command sent again because the server had closed an idle connection
  std::uint64_t pool_waits = 0;             // calls that found every connection to a node busy and waited
  std::uint64_t moved = 0;                  // MOVED redirections followed
  std::uint64_t asked = 0;                  // ASK redirections followed
  std::uint64_t cluster_busy_retries = 0;   // TRYAGAIN or CLUSTERDOWN, sent again after a pause
  std::uint64_t slot_map_refreshes = 0;     // CLUSTER SLOTS fetched and applied
};

struct RedisCounterCells {
  std::atomic<std::uint64_t> connections_opened{0};
  std::atomic<std::uint64_t> connections_discarded{0};
  std::atomic<std::uint64_t> stale_retries{0};
  std::atomic<std::uint64_t> pool_waits{0};
  std::atomic<std::uint64_t> moved{0};
  std::atomic<std::uint64_t> asked{0};
  std::atomic<std::uint64_t> cluster_busy_retries{0};
  std::atomic<std::uint64_t> slot_map_refreshes{0};

  static void add(std::atomic<std::uint64_t>& cell) { cell.fetch_add(1, std::memory_order_relaxed); }

  RedisCounters snapshot() const {
    const auto get = [](const std::atomic<std::uint64_t>& cell) { return cell.load(std::memory_order_relaxed); };
    return RedisCounters{get(connections_opened),
                         get(connections_discarded),
                         get(stale_retries),
                         get(pool_waits),
                         get(moved),
                         get(asked),
                         get(cluster_busy_retries),
                         get(slot_map_refreshes)};
  }
};

}  // namespace jitcache::daemon::remote
