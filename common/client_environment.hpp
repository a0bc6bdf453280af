// The client's environment variables, in one table: libjitcache, libjitcache-preload.so and the
// `jitcache` CLI read them through it, with one rule per type, so that a value means the same in
// every part (docs/configuration.md "Client environment" is generated from this table and a test
// keeps the two equal).
//
// The flag rule (JITCACHE_DISABLE, JITCACHE_QUIET, JITCACHE_PUBLISHED), case-insensitive: unset or
// empty is the default; "0", "false", "no", "off" are off; "1", "true", "yes", "on" and any other
// value are on. Rationale: a value nobody recognises was set by someone who meant something; for
// JITCACHE_DISABLE the safe reading is "disabled" (the program then runs as without the cache).
// The preload library's C shim applies the same rule to JITCACHE_DISABLE.
// In secure-execution mode (set-user-ID, set-group-ID, file capabilities: AT_SECURE) every variable
// reads as unset (secure_getenv): the caller's environment must not name the driver library to load,
// the socket to trust or the report file to write for a process that runs with more rights.
// Thread safety: pure functions over the environment (secure_getenv), the table is constant.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jitcache::common {

enum class EnvType { flag, path, microseconds, milliseconds, users };

struct ClientEnvVariable {
  std::string_view name;
  EnvType type;
  std::string_view default_text;
  std::string_view meaning;
};

inline constexpr ClientEnvVariable k_client_environment[] = {
    {"JITCACHE_SOCKET", EnvType::path, "the user daemon's socket if it exists, else the system one",
     "The daemon's socket; `jitcache_configure()`'s `socket_path` comes first, the `socket` key of the config file "
     "after."},
    {"JITCACHE_CONFIG", EnvType::path, "the user's `jitcached.toml`, else `/etc/jitcache/jitcached.toml`",
     "The TOML file whose `socket` key names the socket when JITCACHE_SOCKET is unset; a file that cannot be "
     "parsed is ignored."},
    {"JITCACHE_DAEMON_USER", EnvType::users, "`jitcache`",
     "Users (names or uids, comma-separated) besides the caller and root who may own the socket's path and "
     "listen on it (docs/security.md \"Whom the client trusts\")."},
    {"JITCACHE_DISABLE", EnvType::flag, "off",
     "On: every load goes to the driver as without the cache, and `jitcache run` passes every call through."},
    {"JITCACHE_QUIET", EnvType::flag, "off",
     "On: no warning line on stderr (the daemon unavailable, the report unwritable)."},
    {"JITCACHE_PUBLISHED", EnvType::flag, "on",
     "Off: published copies are not read; every hit asks the daemon over its socket."},
    {"JITCACHE_REPLY_SPIN_US", EnvType::microseconds, "`300`",
     "How long a reply is awaited on the CPU before sleeping in poll(2), 0 to 10000; another value is ignored."},
    {"JITCACHE_COMPILE_TIMEOUT_MS", EnvType::milliseconds, "`150000`",
     "How long a miss waits for the daemon's compile, 1 to 86400000; `jitcache_config.compile_timeout_ms` comes "
     "first."},
    {"JITCACHE_REPORT", EnvType::path, "(none)",
     "Where a process writes its load report at exit, `%p` the pid (docs/process-report.md); 4096 characters or "
     "more: no report, and one warning."},
    {"JITCACHE_CUDA_DRIVER", EnvType::path, "`libcuda.so.1`", "The driver library libjitcache opens."},
    {"JITCACHE_NVRTC_SCAN_MEMO", EnvType::flag, "on",
     "Off: an NVRTC compile's include scan remembers what it read of headers in the process only, not across "
     "processes (docs/transparent.md \"The scan memo\")."},
    {"JITCACHE_NVRTC_SCAN_MEMO_DIR", EnvType::path,
     "`$XDG_CACHE_HOME/jitcache/nvrtc-scan`, else `~/.cache/jitcache/nvrtc-scan`",
     "The directory (absolute) of the include scan's memo across processes; made 0700, used only when this uid owns "
     "it and nobody else may use it."},
};

// The variable's value; nullopt when unset or empty.
std::optional<std::string> client_env(std::string_view name);

// The flag rule above applied to `value` (nullptr: unset).
bool flag_value(const char* value, bool default_value);
// The flag rule applied to the variable.
bool client_env_flag(std::string_view name, bool default_value);

// The markdown table of docs/configuration.md "Client environment".
std::string client_environment_markdown();

}  // namespace jitcache::common
