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

// Whether `port` of 127.0.0.1 can be bound now.
bool loopback_port_is_free(std::uint16_t port);

// A free port P whose P + offset is free too, both at most 65535 (a Redis Cluster node listens on
// P and on its cluster bus port P + 10000).
std::uint16_t free_loopback_port_with(std::uint16_t offset);

}  // namespace jitcache::testing
