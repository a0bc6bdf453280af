#include <daemon/stats/recent_misses.hpp>

#include <utility>

namespace jitcache::daemon::stats {

void RecentMisses::record(proto::MissRecord miss) {
  const std::uint32_t uid = miss.uid;
  std::lock_guard lock(m_mutex);
  m_ring.push(uid, std::move(miss));
}

std::vector<proto::MissRecord> RecentMisses::newest(std::size_t limit, bool all_uids, std::uint32_t uid) const {
  std::lock_guard lock(m_mutex);
  return m_ring.newest(limit, [&](std::uint32_t owner, const proto::MissRecord&) { return all_uids || owner == uid; });
}

std::vector<proto::MissRecord> RecentMisses::of_key(const proto::Digest256& key_id) const {
  std::lock_guard lock(m_mutex);
  return m_ring.newest(k_recent_misses,
                       [&](std::uint32_t, const proto::MissRecord& miss) { return miss.key_id == key_id; });
}

}  // namespace jitcache::daemon::stats
