#include <daemon/policy/trust_policy.hpp>

#include <algorithm>

namespace jitcache::daemon::policy {

bool TrustPolicy::trusts(const PeerCredentials& peer) const {
  if (peer.uid == 0 || peer.uid == m_daemon_uid) return true;
  if (std::ranges::find(m_users, peer.uid) != m_users.end()) return true;
  for (gid_t group : m_groups) {
    if (peer.gid == group || std::ranges::find(peer.groups, group) != peer.groups.end()) return true;
  }
  return false;
}

}  // namespace jitcache::daemon::policy
