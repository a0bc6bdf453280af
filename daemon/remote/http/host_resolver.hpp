// Turns the server's host name into addresses to connect to, within the call's deadline.
//
// Rationale: getaddrinfo(3) cannot be interrupted, and a DNS server that does not answer holds it
// for the resolver's whole timeout and retries (seconds, resolv.conf's `timeout` × `attempts`),
// far past a remote call's deadline. So a name (not an address literal, which needs no lookup) is
// looked up on a thread of its own, which the caller waits for until the deadline and then leaves
// behind: the thread ends by itself when getaddrinfo returns and frees what it shares with the
// caller. It runs only when a new connection is opened, not per call.
//
// Thread safety: a free function; calls are independent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

#include <common/result.hpp>
#include <daemon/remote/backend/remote_backend.hpp>

namespace jitcache::daemon::remote::http {

// The addresses of `host` (a name, or an IPv4 or IPv6 address) with `port`, in getaddrinfo's order.
// unavailable when the name does not resolve; timeout when the lookup outlasts the deadline.
common::Result<std::vector<boost::asio::ip::tcp::endpoint>> resolve_host(const std::string& host, std::uint16_t port,
                                                                         Deadline deadline);

}  // namespace jitcache::daemon::remote::http
