// Who is on the other end of a Unix socket, from the kernel (SO_PEERCRED and SO_PEERGROUPS), never
// from a request (docs/security.md "What is enforced"). The kernel records them when the peer
// connects. Thread safety: free function.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <common/result.hpp>

namespace jitcache::daemon::policy {

struct PeerCredentials {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
  std::vector<gid_t> groups{};  // supplementary groups (SO_PEERGROUPS); empty where the kernel has none

  std::string describe() const;  // "uid=1000 gid=1000 pid=4242"
};

common::Result<PeerCredentials> read_peer_credentials(int socket_fd);

}  // namespace jitcache::daemon::policy
