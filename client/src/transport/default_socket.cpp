#include <client/src/transport/default_socket.hpp>

#include <sys/stat.h>

#include <client/src/transport/socket_access.hpp>
#include <common/default_paths.hpp>

namespace jitcache::client::transport {

std::string choose_default_socket(const std::vector<std::string>& candidates, const DaemonTrust& trust) {
  for (const std::string& candidate : candidates) {
    if (check_socket_path(candidate, trust)) return candidate;
  }
  for (const std::string& candidate : candidates) {
    struct stat st {};
    // A socket this process may not even look at is there all the same: chosen, so that the
    // connection names the directory that refuses and the group to join (socket_access.hpp),
    // instead of falling back to a user socket nobody started.
    if (::lstat(candidate.c_str(), &st) == 0 || blocked_by_permissions(candidate)) return candidate;
  }
  return candidates.empty() ? std::string() : candidates.front();
}

std::string default_socket(const DaemonTrust& trust) {
  return choose_default_socket(common::default_client_sockets(), trust);
}

}  // namespace jitcache::client::transport
