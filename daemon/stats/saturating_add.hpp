// Adding to a counter without wrapping: at 2^64 - 1 it stays there.
// Rationale: some counters sum values a client chose (compile_microseconds_saved sums the
// compile_time_us of every entry served, and a PUT may claim up to 2^63 - 1), so a few hits could
// otherwise wrap a total to a small number, which a monitoring rate() reads as a reset and a person
// reads as a lie. A stuck maximum is visibly wrong instead. Thread safety: atomic; relaxed ordering,
// like every counter here.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

namespace jitcache::daemon::stats {

inline void saturating_add(std::atomic<std::uint64_t>& counter, std::uint64_t n) {
  constexpr std::uint64_t k_max = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t seen = counter.load(std::memory_order_relaxed);
  for (;;) {
    const std::uint64_t next = seen > k_max - n ? k_max : seen + n;
    if (next == seen || counter.compare_exchange_weak(seen, next, std::memory_order_relaxed)) return;
  }
}

}  // namespace jitcache::daemon::stats
