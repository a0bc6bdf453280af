// Where a Redis remote is and how to log in to it: parsed from the remote's URL (the daemon's
// remote_url setting, docs/configuration.md) with the password added by the caller from
// remote_password_file, never from the URL, so a URL can be logged, shown by STATS and pasted into
// a bug report as it is.
//
//   redis://[user@]host[:port][/db][?prefix=NAME]                standalone; port 6379, db 0
//   redis+cluster://[user@]host[:port][,host[:port]...][?prefix=NAME]  Cluster seeds; no db
//
// An IPv6 literal is written in brackets ("redis://[::1]:6379"). The key prefix (default
// "jitcache:") starts every key the backend names (docs/remote-layout.md "Redis"): 1..64 printable
// ASCII bytes without spaces or braces (a brace would move the Cluster hash tag).
// Thread safety: plain values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <common/result.hpp>

namespace jitcache::daemon::remote {

struct RedisNodeAddress {
  std::string host;  // a name, an IPv4 literal or an IPv6 literal without brackets
  std::uint16_t port = 6379;

  friend bool operator==(const RedisNodeAddress&, const RedisNodeAddress&) = default;
};

// "host:port", "[v6]:port": how logs, errors and the URL write an address.
std::string to_string(const RedisNodeAddress& address);

inline constexpr std::string_view k_default_redis_key_prefix = "jitcache:";
inline constexpr std::size_t k_max_redis_key_prefix_length = 64;

struct RedisSettings {
  enum class Mode : std::uint8_t { standalone, cluster };
  Mode mode = Mode::standalone;
  std::vector<RedisNodeAddress> nodes;  // standalone: exactly one; cluster: the seeds, one or more
  std::string user;                     // the ACL user; empty: the default user
  std::string password;                 // from remote_password_file; empty: no AUTH (unless user is set)
  int db = 0;                           // SELECT on each new connection (standalone only)
  std::string key_prefix = std::string(k_default_redis_key_prefix);
  // The most connections open to one node at a time, busy or idle; a call that finds them all busy
  // waits for one until its deadline. Rationale: the remote lookup lane's threads
  // (server.hpp), the upload, lease and heal threads and the compile threads that wait on leases,
  // each with one call in flight at most, fit without waiting on a 2..16-core host.
  std::size_t max_connections_per_node = 16;
};

// Parses a remote URL of the forms above; invalid_argument naming what is wrong, and
// unsupported for rediss:// (TLS: hiredis 0.14 has none). A URL with a password ("user:pw@")
// is refused: the password belongs in remote_password_file.
common::Result<RedisSettings> parse_redis_url(std::string_view url);

// The URL of `settings` without the password, as RemoteBackend::name() gives it:
// "redis://builder@10.0.0.5:6379/0", "redis+cluster://10.0.0.5:7000,10.0.0.6:7000?prefix=ci:".
std::string redis_url_name(const RedisSettings& settings);

}  // namespace jitcache::daemon::remote
