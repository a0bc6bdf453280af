// The CLI's side of a conversation with jitcached: the options every command shares, connecting,
// and turning transport and daemon errors into exit codes. Thread safety: one thread.
#pragma once

#include <string>

#include <client/cli/exit_codes.hpp>
#include <client/src/transport/daemon_client.hpp>

namespace jitcache::client::cli {

struct GlobalOptions {
  std::string socket_path;  // --socket; empty means $JITCACHE_SOCKET or the default path
  bool json = false;        // --json
};

// --socket when given, else $JITCACHE_SOCKET, else the user daemon's socket or the system socket,
// whichever exists and is trusted first (transport/default_socket.hpp).
std::string resolve_socket_path(const GlobalOptions& options);

// Connects to the daemon, if it is one the CLI trusts (transport/daemon_trust.hpp: the caller, root
// and the users $JITCACHE_DAEMON_USER names, default jitcache). The error message names the socket
// path, so "no daemon there", "wrong path" and "not a daemon to trust" read the same way to the
// user: all are exit 3.
common::Result<transport::DaemonClient> connect_to_daemon(const GlobalOptions& options);

// Reports a failed call and returns its exit code: not_found is 1; a reply carrying a status is 4
// (the daemon refused or failed); a lost, timed-out or broken connection is 3; a reply the client
// cannot use (bad checksum, undecodable) is 4.
ExitCode fail_daemon(const common::Error& error);

// Whether an error came from a daemon reply rather than from the transport (Error::reply_status).
// It separates a daemon answering "unavailable" or "busy" (exit 4) from a closed connection (exit 3),
// which DaemonClient both maps to ErrorCode::unavailable.
bool is_daemon_reply_error(const common::Error& error);

}  // namespace jitcache::client::cli
