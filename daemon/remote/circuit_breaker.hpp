// CircuitBreaker: keeps a dead or sick remote from costing every load its timeout
// (docs/operations.md "A fleet": "A dead remote costs nothing"). Closed, every call goes through;
// after k_failures_to_open failures in a row it opens and calls are skipped (the tier treats the
// remote as a miss at once). Once the open interval has passed, exactly one call is let through
// as a probe (half open): its success closes the breaker, its failure opens it again for twice
// the interval, up to max_open. Only failures that say the remote is unwell count (timeout,
// unavailable, garbage, server errors); a miss, a rejection by our own checks or a value too large
// is the remote working.
// Thread safety: every method may be called from any thread (one mutex, held for nanoseconds).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string_view>

#include <common/result.hpp>

namespace jitcache::daemon::remote {

class CircuitBreaker {
 public:
  using Clock = std::chrono::steady_clock;
  enum class State : std::uint8_t { closed = 0, open = 1, half_open = 2 };  // the gauge's values

  static constexpr unsigned k_failures_to_open = 3;

  explicit CircuitBreaker(std::chrono::milliseconds first_open = std::chrono::milliseconds(500),
                          std::chrono::milliseconds max_open = std::chrono::milliseconds(60'000))
      : m_first_open(first_open), m_max_open(max_open), m_open_for(first_open) {}

  // Whether a call may go to the remote now; when true and the breaker was open, this call is the
  // probe, and it must be followed by succeeded() or failed().
  bool allow(Clock::time_point now = Clock::now());
  void succeeded();
  // Returns true when this failure opened the breaker (for a log line and breaker_opens).
  bool failed(Clock::time_point now = Clock::now());

  State state() const;
  std::chrono::milliseconds open_interval() const;

  // Whether a failure with this code says the remote is unwell.
  static bool counts_against(common::ErrorCode code);

 private:
  const std::chrono::milliseconds m_first_open;
  const std::chrono::milliseconds m_max_open;
  mutable std::mutex m_mutex;
  State m_state = State::closed;
  unsigned m_failures = 0;
  std::chrono::milliseconds m_open_for;
  Clock::time_point m_retry_at{};
  bool m_probe_out = false;
};

std::string_view breaker_state_name(CircuitBreaker::State state);

}  // namespace jitcache::daemon::remote
