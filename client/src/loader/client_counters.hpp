// Process-wide counts of load outcomes and cache events (jitcache_get_counters), so that a program or
// a test can see how often the cache helped and why it did not.
// Thread safety: every member is atomic.
#pragma once

#include <atomic>
#include <cstdint>

#include <jitcache/jitcache.h>

namespace jitcache::client::loader {

struct ClientCounters {
  std::atomic<std::uint64_t> loads{0};
  std::atomic<std::uint64_t> pass_through{0};
  std::atomic<std::uint64_t> hits{0};
  std::atomic<std::uint64_t> compiled_by_daemon{0};
  std::atomic<std::uint64_t> compiled_locally{0};
  std::atomic<std::uint64_t> rebuilt_after_failed_load{0};
  std::atomic<std::uint64_t> uncached_fallbacks{0};
  std::atomic<std::uint64_t> daemon_unavailable{0};
  std::atomic<std::uint64_t> failure_reports{0};
  std::atomic<std::uint64_t> puts{0};
  std::atomic<std::uint64_t> put_failures{0};
  std::atomic<std::uint64_t> corrupt_replies{0};
  std::atomic<std::uint64_t> fast_key_mismatches{0};
  std::atomic<std::uint64_t> published_hits{0};
  std::atomic<std::uint64_t> published_rejects{0};
  std::atomic<std::uint64_t> lookups{0};

  void count_outcome(jitcache_load_outcome outcome);
  jitcache_counters snapshot() const;
  void reset();
};

}  // namespace jitcache::client::loader
