// Who is trusted (docs/security.md "The threat model"): root, the daemon's own uid, the uids in
// trusted_users, and any peer whose primary or supplementary group (as the kernel reported them
// when it connected) is in trusted_groups. A trusted peer's PUTs go to the shared namespace, its
// failure reports quarantine shared entries at once, it lists and removes in every namespace and
// may run GC and VERIFY, and it is exempt from the report rate limit. Thread safety: immutable.
#pragma once

#include <sys/types.h>

#include <vector>

#include <daemon/policy/peer_credentials.hpp>

namespace jitcache::daemon::policy {

class TrustPolicy {
 public:
  // Only root and `daemon_uid`.
  explicit TrustPolicy(uid_t daemon_uid) : m_daemon_uid(daemon_uid) {}
  TrustPolicy(uid_t daemon_uid, std::vector<uid_t> users, std::vector<gid_t> groups)
      : m_daemon_uid(daemon_uid), m_users(std::move(users)), m_groups(std::move(groups)) {}

  bool trusts(const PeerCredentials& peer) const;

 private:
  uid_t m_daemon_uid;
  std::vector<uid_t> m_users;
  std::vector<gid_t> m_groups;
};

}  // namespace jitcache::daemon::policy
