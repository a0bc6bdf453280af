#include <daemon/server/diagnosis_lane.hpp>

namespace jitcache::daemon::server {

bool DiagnosisLane::try_enter(uid_t uid) {
  if (m_total.fetch_add(1, std::memory_order_acq_rel) >= k_total) {
    m_total.fetch_sub(1, std::memory_order_acq_rel);
    return false;
  }
  if (!m_per_uid.try_acquire(uid)) {
    m_total.fetch_sub(1, std::memory_order_acq_rel);
    return false;
  }
  return true;
}

void DiagnosisLane::leave(uid_t uid) {
  m_per_uid.release(uid);
  m_total.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace jitcache::daemon::server
