#include <daemon/policy/peer_credentials.hpp>

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace jitcache::daemon::policy {

namespace {

// Rationale: trusted_groups must see the groups a peer had when it connected, from the kernel;
// looking the uid up in the group database would trust a membership the process dropped (setgroups)
// and miss one a container gave it without a database entry. Linux ≥ 4.13 has SO_PEERGROUPS.
common::Result<std::vector<gid_t>> read_peer_groups(int socket_fd) {
  std::vector<gid_t> groups(32);
  for (;;) {
    socklen_t length = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(socket_fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &length) == 0) {
      groups.resize(length / sizeof(gid_t));
      return groups;
    }
    if (errno == ERANGE && length > groups.size() * sizeof(gid_t)) {
      groups.resize(length / sizeof(gid_t));
      continue;
    }
    if (errno == ENOPROTOOPT) return std::vector<gid_t>();  // an older kernel: no supplementary groups
    return common::make_error(common::ErrorCode::io, std::string("SO_PEERGROUPS: ") + std::strerror(errno));
  }
}

}  // namespace

std::string PeerCredentials::describe() const {
  return "uid=" + std::to_string(uid) + " gid=" + std::to_string(gid) + " pid=" + std::to_string(pid);
}

common::Result<PeerCredentials> read_peer_credentials(int socket_fd) {
  ucred cred{};
  socklen_t length = sizeof(cred);
  if (::getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) {
    return common::make_error(common::ErrorCode::io, std::string("SO_PEERCRED: ") + std::strerror(errno));
  }
  JITCACHE_TRY_ASSIGN(auto groups, read_peer_groups(socket_fd));
  return PeerCredentials{cred.uid, cred.gid, cred.pid, std::move(groups)};
}

}  // namespace jitcache::daemon::policy
