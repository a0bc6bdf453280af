// The metrics endpoint's `metrics_listen` value: "127.0.0.1:9464", "[::1]:9464" or
// "localhost:9464" (127.0.0.1); port 0 lets the kernel choose (the log says which it chose).
// Only loopback addresses are accepted (127.0.0.0/8 and ::1).
// Rationale: the exposition names uids (bytes by namespace), traffic and failure figures of every
// tenant, and the endpoint has no authentication; a host that wants it scraped from elsewhere puts
// a proxy with TLS and authentication in front, or runs Prometheus (or its agent) on the host.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <jitcache/proto/result.hpp>

namespace jitcache::daemon::config {

struct ListenAddress {
  std::string host;  // a numeric IPv4 or IPv6 address, without brackets
  std::uint16_t port = 0;
};

// Errors (invalid_argument) say what is wrong: not host:port, a host that is not an IP address, a
// port outside 0..65535, or an address that is not loopback.
proto::Result<ListenAddress> parse_listen_address(std::string_view text);

}  // namespace jitcache::daemon::config
