// WarningThrottle: a warning that can repeat in a burst (every failed accept, every memfd that
// could not be made while descriptors are short) is logged at most once an interval, saying how
// many times it happened meanwhile; the counter in STATS has the exact figure.
// Rationale: at the descriptor limit every accept and every LOOKUP by descriptor failed, and one
// warning each wrote 400 lines in seconds, which helps no one and fills the log's disk.
// Thread safety: admit() may be called from any thread (one mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace jitcache::daemon::server {

class WarningThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  explicit WarningThrottle(Clock::duration interval) : m_interval(interval) {}

  // Records one occurrence. Returns how many occurred since the last one logged, this one included,
  // when this one is to be logged; 0 when it is to be kept quiet.
  std::uint64_t admit(Clock::time_point now = Clock::now());

 private:
  const Clock::duration m_interval;
  std::mutex m_mutex;
  bool m_logged_once = false;
  Clock::time_point m_last_logged;
  std::uint64_t m_quiet = 0;
};

}  // namespace jitcache::daemon::server
