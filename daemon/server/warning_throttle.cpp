#include <daemon/server/warning_throttle.hpp>

namespace jitcache::daemon::server {

std::uint64_t WarningThrottle::admit(Clock::time_point now) {
  std::lock_guard lock(m_mutex);
  ++m_quiet;
  if (m_logged_once && now - m_last_logged < m_interval) return 0;
  m_logged_once = true;
  m_last_logged = now;
  const std::uint64_t occurred = m_quiet;
  m_quiet = 0;
  return occurred;
}

}  // namespace jitcache::daemon::server
