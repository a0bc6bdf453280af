#include <client/src/transport/socket_access.hpp>

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace jitcache::client::transport {

namespace {

std::string group_name(gid_t gid) {
  const long size = ::sysconf(_SC_GETGR_R_SIZE_MAX);
  std::vector<char> buffer(size > 0 ? static_cast<std::size_t>(size) : 16384);
  group entry{};
  group* found = nullptr;
  if (::getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
    return std::to_string(gid);
  }
  return found->gr_name;
}

}  // namespace

bool blocked_by_permissions(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) != 0 && errno == EACCES;
}

std::string permission_denied_text(const std::string& refusing) {
  std::string text = std::strerror(EACCES);
  struct stat st {};
  if (::stat(refusing.c_str(), &st) != 0) return text + " (" + refusing + ")";
  char mode[8];
  std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
  const std::string group = group_name(st.st_gid);
  // Rationale: a daemon started without socket_group leaves its socket in root's group (gid 0);
  // "join group root" is never the advice: the daemon's socket_group is.
  if (st.st_gid == 0) {
    return text + ": " + refusing + " (mode " + mode + ") is in group root, so only root reaches it: set " +
           "socket_group in the daemon's configuration (or --socket-group) to a group for its users, and " +
           "add them to that group (docs/operations.md)";
  }
  return text + ": " + refusing + " is group " + group + "'s (mode " + mode + ") and uid " +
         std::to_string(::geteuid()) + " is not in that group; add the user to it (`usermod -aG " + group +
         " USER`, then log in again, or `newgrp " + group + "`)";
}

std::optional<std::string> held_by_service_manager_text(int connected_socket, const std::string& socket_path,
                                                        const std::string& what) {
  ucred peer{};
  socklen_t length = sizeof(peer);
  if (::getsockopt(connected_socket, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || peer.pid != 1) {
    return std::nullopt;
  }
  return "jitcached at " + socket_path + ": " + what +
         ": systemd holds the socket (pid 1 listens on it) and no jitcached serves it: the service is failing "
         "to start (a crash loop, or a setting its sandbox forbids), stopped or hung; see `systemctl status "
         "jitcached` and `journalctl -u jitcached` (docs/operations.md \"Restarts and start limits\")";
}

}  // namespace jitcache::client::transport
