// Whether the network sockets the configuration asks for (a TCP `metrics_listen`, a `remote`) can
// exist under the sandbox the daemon was started in. The shipped unit (packaging/systemd/
// jitcached.service) allows Unix sockets alone (RestrictAddressFamilies=AF_UNIX) and gives the
// service a network namespace of its own (PrivateNetwork=yes); the fleet and TCP metrics need the
// drop-in packaging/systemd/jitcached-network.conf (docs/operations.md "A fleet", "Monitoring").
//
// Rationale: a socket family the sandbox forbids is refused before anything else opens, with a
// message that names the unit setting and exit status k_exit_sandbox_forbids, which the unit's
// RestartPreventExitStatus= keeps systemd from restarting: no restart can make the family allowed,
// and a crash loop would keep every client waiting in the socket's backlog. A private network is
// only warned about: the daemon cannot tell it from a host (or container) with loopback alone, where
// a loopback port works.
// Thread safety: called once, at start.
#pragma once

#include <optional>
#include <string>

#include <daemon/config/config.hpp>

namespace jitcache::daemon::startup {

// EX_CONFIG of sysexits.h: "something was found in an unconfigured or misconfigured state".
inline constexpr int k_exit_sandbox_forbids = 78;

// The refusal's text when a socket the configuration needs cannot be made here (EAFNOSUPPORT,
// EPERM from a seccomp filter): which setting needs which family, and the unit's setting that
// forbids it. Nullopt when every socket it needs can be made.
std::optional<std::string> network_refusal(const config::Config& config);

// Closes every connection waiting on an inherited (socket-activated) listening socket, before the
// daemon exits refusing to start. Rationale: systemd starts the service again for as long as a
// connection waits, whatever RestartPreventExitStatus= says; taking the waiting ones leaves the socket
// idle and listening, so the next client starts one more attempt (which succeeds once the unit is
// fixed) instead of a burst that reaches jitcached.socket's trigger limit and fails it. The clients
// see the connection closed and fall back to the driver's JIT at once (the CLI then names systemd
// and the journal: client/src/transport/socket_access.hpp).
void close_waiting_connections(int listening_fd);

// Under a service manager (INVOCATION_ID set) with loopback as the only network interface: a
// warning that a TCP metrics port or a remote is in a network namespace of its own. Nullopt otherwise.
std::optional<std::string> private_network_warning(const config::Config& config);

}  // namespace jitcache::daemon::startup
