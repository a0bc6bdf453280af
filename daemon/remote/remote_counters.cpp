#include <daemon/remote/remote_counters.hpp>

namespace jitcache::daemon::remote {

void RemoteCounters::count_error(common::ErrorCode code) {
  for (std::size_t i = 0; i < k_remote_error_kinds.size(); ++i) {
    if (k_remote_error_kinds[i].first == code) {
      add(errors[i]);
      return;
    }
  }
  // A code no backend should report (internal, invalid_argument, ...): counted as the server's.
  add(errors[4]);
}

void RemoteCounters::record_latency(std::chrono::microseconds elapsed) {
  const auto us = static_cast<std::uint64_t>(elapsed.count() < 0 ? 0 : elapsed.count());
  std::size_t slot = k_remote_latency_buckets.size();
  for (std::size_t i = 0; i < k_remote_latency_buckets.size(); ++i) {
    if (us <= k_remote_latency_buckets[i].upper_us) {
      slot = i;
      break;
    }
  }
  add(latency_buckets[slot]);
  add(latency_sum_us, us);
}

std::uint64_t RemoteCounters::errors_total() const {
  std::uint64_t total = 0;
  for (const Counter& c : errors) total += c.load(std::memory_order_relaxed);
  return total;
}

}  // namespace jitcache::daemon::remote
