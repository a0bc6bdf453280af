// The metrics endpoint's `metrics_listen` value: a loopback TCP address, "127.0.0.1:9464",
// "[::1]:9464" or "localhost:9464" (127.0.0.1), port 0 letting the kernel choose (the log says which
// it chose); or a Unix socket, "unix:/run/jitcache/metrics.sock" (an absolute path).
// Only loopback addresses are accepted for TCP (127.0.0.0/8 and ::1).
// Rationale: the exposition shows traffic and failure figures of every tenant (and, with
// metrics_per_uid, bytes by uid), and the endpoint has no authentication. On loopback any local
// user can read it; a Unix socket is mode 0660 with the main socket's group, so only that group
// can. A host that wants it scraped from elsewhere puts a proxy with TLS and authentication in
// front, or runs Prometheus (or its agent) on the host.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <common/result.hpp>

namespace jitcache::daemon::config {

inline constexpr std::string_view k_unix_listen_prefix = "unix:";

struct ListenAddress {
  std::string host;  // TCP: a numeric IPv4 or IPv6 address, without brackets; empty for a Unix socket
  std::uint16_t port = 0;
  std::string unix_path;  // a Unix socket's absolute path; empty for TCP

  bool is_unix() const { return !unix_path.empty(); }
};

// Errors (invalid_argument) say what is wrong: not host:port, a host that is not an IP address, a
// port outside 0..65535, an address that is not loopback, or a Unix socket path that is relative,
// names a directory or is too long for a socket address.
common::Result<ListenAddress> parse_listen_address(std::string_view text);

}  // namespace jitcache::daemon::config
