// Where jitcached listens and keeps its state when nothing says otherwise; shared by daemon and
// client so both agree without configuration. Thread safety: reads the environment; call at start-up.
#pragma once

#include <string>

namespace jitcache::proto {

// The socket a user-run daemon creates: $XDG_RUNTIME_DIR/jitcache/jitcached.sock, else
// /run/user/<uid>/jitcache/jitcached.sock when that runtime dir exists, else /tmp/jitcache-<uid>/.
std::string user_socket_path();
// The daemon's TOML configuration file when none is named: /etc/jitcache/jitcached.toml for root,
// else $XDG_CONFIG_HOME/jitcache/jitcached.toml, else ~/.config/jitcache/jitcached.toml ("" when
// there is no home). The client reads its `socket` key too, so both agree on the socket.
std::string default_config_file();
inline constexpr const char* k_system_config_file = "/etc/jitcache/jitcached.toml";

// The system service's socket (systemd RuntimeDirectory=jitcache).
inline constexpr const char* k_system_socket_path = "/run/jitcache/jitcached.sock";

// The socket a client talks to: $JITCACHE_SOCKET, else the user socket when it exists, else the
// system socket (root always uses the system socket).
std::string client_socket_path();

}  // namespace jitcache::proto
