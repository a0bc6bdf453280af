// Free TCP ports on 127.0.0.1 for servers a test starts (redis-server, nginx): the kernel picks one
// for a socket bound to port 0, which is closed again before the server binds it. Another process
// may take the port in between, so a caller that starts a server on it retries on "address in use"
// (RedisServer does). Thread safety: free function.
#pragma once

#include <cstdint>

namespace jitcache::testing {

// A port of 127.0.0.1 that nothing listened on a moment ago; throws std::runtime_error when the
// kernel gives none.
std::uint16_t free_loopback_port();

}  // namespace jitcache::testing
