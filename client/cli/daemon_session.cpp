#include <client/cli/daemon_session.hpp>

#include <chrono>
#include <cstdlib>
#include <string_view>

#include <client/cli/failure.hpp>
#include <client/src/transport/default_socket.hpp>
#include <proto/wire.hpp>

namespace jitcache::client::cli {

namespace {

// Rationale: an interactive tool should say "no daemon" quickly, but a busy daemon may queue a
// connection briefly; two seconds covers that without making a dead socket feel like a hang.
constexpr std::chrono::milliseconds k_connect_timeout{2000};
// Rationale: a daemon that binds its own socket refuses connections from the start of its drain
// until its successor has opened the store and bound the socket again: 30-90 ms from SIGTERM to
// the first answer on a busy 2-core machine with a small store, more where the start-up check of
// a large store takes longer (docs/operations.md "Restarts"). A second covers a restart many times
// over; a daemon that is simply not running is reported after it.
constexpr std::chrono::milliseconds k_restart_wait{1000};
// A LOOKUP or PUT of a 64 MiB image on a loaded machine can take a while; a minute still bounds a
// hung daemon.
constexpr std::chrono::milliseconds k_io_timeout{60000};
// Rationale: the first answer (HELLO) comes from a daemon that is up within milliseconds, and from
// one that socket activation starts, or that restarts, within about 1 s (RestartSec=1s, start to
// READY well under a second: docs/operations.md "Restarts"). A crash-looping service never answers;
// five seconds tells that apart without a minute in systemd's backlog, and the error then names
// systemd as the socket's holder (transport/socket_access.hpp).
constexpr std::chrono::milliseconds k_first_reply_timeout{5000};

}  // namespace

std::string resolve_socket_path(const GlobalOptions& options) {
  if (!options.socket_path.empty()) return options.socket_path;
  if (const char* named = std::getenv("JITCACHE_SOCKET"); named != nullptr && *named != '\0') return named;
  return transport::default_socket(transport::DaemonTrust::from_environment());
}

common::Result<transport::DaemonClient> connect_to_daemon(const GlobalOptions& options) {
  transport::ConnectOptions connect;
  connect.socket_path = resolve_socket_path(options);
  connect.connect_timeout = k_connect_timeout;
  connect.io_timeout = k_io_timeout;
  connect.trust = transport::DaemonTrust::from_environment();
  connect.restart_wait = k_restart_wait;
  connect.first_reply_timeout = k_first_reply_timeout;
  auto client = transport::DaemonClient::connect(connect);
  if (!client) {
    std::string message = client.error().message;
    if (message.find(connect.socket_path) == std::string::npos) {
      message = "cannot reach jitcached at " + connect.socket_path + ": " + message;
    }
    return common::make_error(client.error().code, std::move(message));
  }
  return client;
}

bool is_daemon_reply_error(const common::Error& error) { return error.reply_status != 0; }

ExitCode fail_daemon(const common::Error& error) {
  using common::ErrorCode;
  if (error.code == ErrorCode::not_found) return fail(ExitCode::not_found, error.message);
  if (is_daemon_reply_error(error)) return fail(ExitCode::daemon_failed, "jitcached: " + error.message);
  switch (error.code) {
    case ErrorCode::timeout:
    case ErrorCode::io:
    case ErrorCode::unavailable: return fail(ExitCode::unreachable, error.message);
    default: return fail(ExitCode::daemon_failed, "unusable reply from jitcached: " + error.message);
  }
}

}  // namespace jitcache::client::cli
