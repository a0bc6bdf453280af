#include <daemon/remote/rejection_log.hpp>

namespace jitcache::daemon::remote {

bool RejectionLog::first_time(const proto::Digest256& key) {
  std::lock_guard lock(m_mutex);
  if (m_seen.size() >= k_max_keys) m_seen.clear();
  return m_seen.insert(key).second;
}

}  // namespace jitcache::daemon::remote
