#include <daemon/policy/uid_connection_counts.hpp>

namespace jitcache::daemon::policy {

bool UidConnectionCounts::try_acquire(uid_t uid) {
  std::lock_guard lock(m_mutex);
  unsigned& count = m_open[uid];
  if (m_limit != 0 && count >= m_limit) return false;
  ++count;
  return true;
}

void UidConnectionCounts::release(uid_t uid) {
  std::lock_guard lock(m_mutex);
  auto it = m_open.find(uid);
  if (it == m_open.end()) return;
  if (--it->second == 0) m_open.erase(it);
}

unsigned UidConnectionCounts::open(uid_t uid) const {
  std::lock_guard lock(m_mutex);
  auto it = m_open.find(uid);
  return it == m_open.end() ? 0 : it->second;
}

}  // namespace jitcache::daemon::policy
