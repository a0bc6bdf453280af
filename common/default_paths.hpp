// Where jitcached listens and keeps its state when nothing says otherwise; shared by daemon and
// client so both agree without configuration. Thread safety: reads the environment; call at start-up.
#pragma once

#include <string>
#include <vector>

namespace jitcache::common {

// The socket a user-run daemon creates: $XDG_RUNTIME_DIR/jitcache/jitcached.sock, else
// /run/user/<uid>/jitcache/jitcached.sock when that runtime dir exists, else
// /tmp/jitcache-<uid>/jitcached.sock. Rationale for keeping the /tmp fallback (cron, su, batch jobs
// have no runtime dir): anyone may create /tmp/jitcache-<uid> first, so neither side takes it on
// trust. The daemon refuses a socket directory it does not own or that others may write
// (daemon/unix_socket/listening_socket.hpp); the client talks to a socket only when its whole path and
// its peer are trusted (client/src/transport/daemon_trust.hpp, docs/security.md "Whom the client
// trusts").
std::string user_socket_path();
// The daemon's TOML configuration file when none is named: /etc/jitcache/jitcached.toml for root,
// else $XDG_CONFIG_HOME/jitcache/jitcached.toml, else ~/.config/jitcache/jitcached.toml ("" when
// there is no home). The client reads its `socket` key too, so both agree on the socket.
std::string default_config_file();
inline constexpr const char* k_system_config_file = "/etc/jitcache/jitcached.toml";

// The system service's socket (systemd RuntimeDirectory=jitcache).
inline constexpr const char* k_system_socket_path = "/run/jitcache/jitcached.sock";

// The sockets a client considers when nothing names one, in order of preference: the user socket,
// then the system socket; root considers the system socket only. Which one is used is the client's
// choice (client/src/transport/default_socket.hpp): the first one that exists and is trusted.
std::vector<std::string> default_client_sockets();

}  // namespace jitcache::common
