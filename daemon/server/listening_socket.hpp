// The daemon's listening Unix socket: creates its directory, takes the socket's instance lock,
// removes a socket file left by a crashed daemon (safe only because the lock proves no live daemon
// owns it), binds, sets the mode and listens. Thread safety: start-up only.
#pragma once

#include <string>

#include <daemon/server/instance_lock.hpp>
#include <jitcache/proto/result.hpp>

namespace jitcache::daemon::server {

struct ListeningSocket {
  int fd = -1;
  InstanceLock lock;
};

// Rationale: a backlog of 1024 lets a burst of short-lived clients (a fleet of tools starting at
// once) queue in the kernel instead of being refused while the accept loop catches up.
inline constexpr int k_listen_backlog = 1024;

proto::Result<ListeningSocket> open_listening_socket(const std::string& socket_path);

// mkdir -p with `mode` for the directories it creates.
proto::Result<void> make_directories(const std::string& path, unsigned mode);

}  // namespace jitcache::daemon::server
