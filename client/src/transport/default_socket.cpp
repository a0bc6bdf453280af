#include <client/src/transport/default_socket.hpp>

#include <sys/stat.h>

#include <common/default_paths.hpp>

namespace jitcache::client::transport {

std::string choose_default_socket(const std::vector<std::string>& candidates, const DaemonTrust& trust) {
  for (const std::string& candidate : candidates) {
    if (check_socket_path(candidate, trust)) return candidate;
  }
  for (const std::string& candidate : candidates) {
    struct stat st {};
    if (::lstat(candidate.c_str(), &st) == 0) return candidate;
  }
  return candidates.empty() ? std::string() : candidates.front();
}

std::string default_socket(const DaemonTrust& trust) {
  return choose_default_socket(common::default_client_sockets(), trust);
}

}  // namespace jitcache::client::transport
