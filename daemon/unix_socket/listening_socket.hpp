// The daemon's listening Unix socket: creates its directory, refuses a directory someone else could
// write (docs/security.md "What is enforced": whoever can replace the socket can serve every client
// code), takes the socket's instance lock, removes a socket file left by a crashed daemon (safe
// only because the lock proves no live daemon owns it), binds with mode 0660 and the configured
// group, and listens.
// Thread safety: start-up only.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include <common/result.hpp>
#include <daemon/unix_socket/instance_lock.hpp>

namespace jitcache::daemon::unix_socket {

struct ListeningSocket {
  int fd = -1;
  InstanceLock lock;
};

// Rationale: a backlog of 1024 lets a burst of short-lived clients (a fleet of tools starting at
// once) queue in the kernel instead of being refused while the accept loop catches up.
inline constexpr int k_listen_backlog = 1024;

// `group`: the group that may connect (the socket is 0660, its directory 0750); none: the daemon's own.
common::Result<ListeningSocket> open_listening_socket(const std::string& socket_path, std::optional<gid_t> group = {});

// Ok when `directory` is a real directory (not a link) owned by this process's effective uid and
// writable by nobody else; otherwise an error that says what is wrong and what to do.
common::Result<void> check_socket_directory(const std::string& directory);

// mkdir -p with `mode` for the directories it creates.
common::Result<void> make_directories(const std::string& path, unsigned mode);

}  // namespace jitcache::daemon::unix_socket
