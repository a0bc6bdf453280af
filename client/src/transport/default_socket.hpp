// The socket a client uses when nothing names one (no jitcache_configure() path, JITCACHE_SOCKET,
// config file `socket` or --socket): the first of common::default_client_sockets() that exists and
// is trusted (daemon_trust.hpp), so that a user socket another uid planted (/tmp/jitcache-<uid> is
// anyone's to create first) does not hide the system socket behind it. When none is trusted, the
// first that exists, so that the connection fails naming what is wrong with it; when none exists,
// the first (the user daemon's, where starting `jitcached` would put it).
// Thread safety: pure functions over the file system.
#pragma once

#include <string>
#include <vector>

#include <client/src/transport/daemon_trust.hpp>

namespace jitcache::client::transport {

std::string choose_default_socket(const std::vector<std::string>& candidates, const DaemonTrust& trust);

// choose_default_socket(common::default_client_sockets(), trust).
std::string default_socket(const DaemonTrust& trust);

}  // namespace jitcache::client::transport
