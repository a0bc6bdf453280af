// Where libjitcache finds the daemon and how long it waits for it, resolved once per configuration.
//
// Precedence for the socket: jitcache_configure()'s socket_path, then $JITCACHE_SOCKET, then the
// `socket` key of the TOML config file ($JITCACHE_CONFIG, else the user's jitcached.toml, else
// /etc/jitcache/jitcached.toml), then the default: the first of the user daemon's socket and the
// system socket that exists and is trusted (transport/default_socket.hpp). Whichever it is, the
// library uses it only if it trusts it (transport/daemon_trust.hpp): JITCACHE_DAEMON_USER names the
// daemon's users besides the caller and root (default: jitcache).
// Every variable is read through common/client_environment.hpp (one table, one rule per type).
// JITCACHE_DISABLE=1 (or config.disable) turns caching off; JITCACHE_QUIET=1 (or config.quiet)
// silences the one warning; JITCACHE_REPLY_SPIN_US sets how long a reply is awaited on the CPU;
// JITCACHE_COMPILE_TIMEOUT_MS (or config.compile_timeout_ms, when the caller's struct has it) how
// long a miss waits for the daemon's compile; JITCACHE_PUBLISHED=0 stops reading the daemon's
// published images (every hit then goes through the socket). A config file that cannot be parsed is reported in `notes`
// and ignored: a broken cache configuration must not break the program. Thread safety: pure functions over the
// environment and files; the result is a value.
#pragma once

#include <chrono>
#include <string>

#include <jitcache/jitcache.h>
#include <client/src/transport/daemon_trust.hpp>

namespace jitcache::client::loader {

inline constexpr std::chrono::milliseconds k_default_connect_timeout{100};
inline constexpr std::chrono::milliseconds k_default_request_timeout{2000};
// Rationale: 300 us took ~85 us off a new connection's first LOOKUP on the H200 host (docs/benchmarks.md);
// a reply that takes longer (a compile, a cold read) is awaited in poll(2) after it.
inline constexpr std::chrono::microseconds k_default_reply_spin{300};
// Rationale: the daemon's default compile_wall_time is 120 s and a queued compile waits for a slot
// first; the client, which would otherwise JIT the module itself for about as long, waits a little
// longer than one compile. A daemon that hangs is caught earlier, by request_timeout on its LOOKUP.
inline constexpr std::chrono::milliseconds k_default_compile_timeout{150'000};
inline constexpr std::chrono::microseconds k_max_reply_spin{10000};

struct ClientSettings {
  std::string socket_path;
  std::string socket_source;  // "jitcache_configure", "JITCACHE_SOCKET", "<file>", "default"
  // Who may own the socket's path and listen on it (and own the published directory).
  transport::DaemonTrust daemon_trust = transport::DaemonTrust::callers_own();
  bool disabled = false;
  std::string disabled_by;  // "JITCACHE_DISABLE=1" or "jitcache_configure"
  std::chrono::milliseconds connect_timeout = k_default_connect_timeout;
  std::chrono::milliseconds request_timeout = k_default_request_timeout;
  // How long a miss waits for COMPILE (jitcache_config.compile_timeout_ms, JITCACHE_COMPILE_TIMEOUT_MS).
  std::chrono::milliseconds compile_timeout = k_default_compile_timeout;
  // JITCACHE_REPLY_SPIN_US: transport::ConnectOptions::reply_spin (0 .. k_max_reply_spin).
  std::chrono::microseconds reply_spin = k_default_reply_spin;
  bool quiet = false;
  // Look for a hit in the daemon's published directory before asking over the socket.
  bool published = true;
  std::string notes;  // problems met while resolving (an unreadable config file)
};

// `config` may be null (environment defaults only).
ClientSettings resolve_settings(const jitcache_config* config);

// Whether published copies are to be read and the daemon keeps them now (a stat of their directory).
// Rationale: where it does, a hit may need no connection, so a load connects only once it knows it
// needs one, rather than early to let the daemon wake meanwhile (api/cached_load.cpp, load_flow.cpp).
bool reads_published_copies(const ClientSettings& settings);

}  // namespace jitcache::client::loader
