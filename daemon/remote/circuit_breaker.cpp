#include <daemon/remote/circuit_breaker.hpp>

#include <algorithm>

namespace jitcache::daemon::remote {

bool CircuitBreaker::allow(Clock::time_point now) {
  std::lock_guard lock(m_mutex);
  switch (m_state) {
    case State::closed: return true;
    case State::open:
      if (now < m_retry_at) return false;
      m_state = State::half_open;
      m_probe_out = true;
      return true;
    case State::half_open:
      // One probe at a time; the others are skipped until it answers.
      if (m_probe_out) return false;
      m_probe_out = true;
      return true;
  }
  return false;
}

void CircuitBreaker::succeeded() {
  std::lock_guard lock(m_mutex);
  m_state = State::closed;
  m_failures = 0;
  m_open_for = m_first_open;
  m_probe_out = false;
}

bool CircuitBreaker::failed(Clock::time_point now) {
  std::lock_guard lock(m_mutex);
  if (m_state == State::half_open) {
    m_open_for = std::min(m_open_for * 2, m_max_open);
    m_state = State::open;
    m_retry_at = now + m_open_for;
    m_probe_out = false;
    return true;
  }
  if (m_state == State::open) return false;  // a call that started before the breaker opened
  if (++m_failures < k_failures_to_open) return false;
  m_state = State::open;
  m_retry_at = now + m_open_for;
  return true;
}

CircuitBreaker::State CircuitBreaker::state() const {
  std::lock_guard lock(m_mutex);
  return m_state;
}

std::chrono::milliseconds CircuitBreaker::open_interval() const {
  std::lock_guard lock(m_mutex);
  return m_open_for;
}

bool CircuitBreaker::counts_against(common::ErrorCode code) {
  using common::ErrorCode;
  return code == ErrorCode::timeout || code == ErrorCode::unavailable || code == ErrorCode::corrupt ||
         code == ErrorCode::io || code == ErrorCode::forbidden;
}

std::string_view breaker_state_name(CircuitBreaker::State state) {
  switch (state) {
    case CircuitBreaker::State::closed: return "closed";
    case CircuitBreaker::State::open: return "open";
    case CircuitBreaker::State::half_open: return "half_open";
  }
  return "closed";
}

}  // namespace jitcache::daemon::remote
