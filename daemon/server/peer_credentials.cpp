#include <daemon/server/peer_credentials.hpp>

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace jitcache::daemon::server {

std::string PeerCredentials::describe() const {
  return "uid=" + std::to_string(uid) + " gid=" + std::to_string(gid) + " pid=" + std::to_string(pid);
}

proto::Result<PeerCredentials> read_peer_credentials(int socket_fd) {
  ucred cred{};
  socklen_t length = sizeof(cred);
  if (::getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) {
    return proto::make_error(proto::ErrorCode::io, std::string("SO_PEERCRED: ") + std::strerror(errno));
  }
  return PeerCredentials{cred.uid, cred.gid, cred.pid};
}

}  // namespace jitcache::daemon::server
