#include <daemon/config/config_table.hpp>

#include <array>
#include <cctype>
#include <charconv>

#include <common/result.hpp>
#include <daemon/config/listen_address.hpp>
#include <daemon/config/units.hpp>

namespace jitcache::daemon::config {

using common::ErrorCode;
using common::make_error;
using common::Result;

namespace {

Result<void> set_path(std::string& target, std::string_view value) {
  if (value.empty()) return make_error(ErrorCode::invalid_argument, "must not be empty");
  target = std::string(value);
  return {};
}

Result<void> set_bool(bool& target, std::string_view value) {
  if (value == "true" || value == "1" || value == "yes" || value == "on") {
    target = true;
  } else if (value == "false" || value == "0" || value == "no" || value == "off") {
    target = false;
  } else {
    return make_error(ErrorCode::invalid_argument, "\"" + std::string(value) + "\" is not true or false");
  }
  return {};
}

Result<void> set_count(unsigned& target, std::string_view value, unsigned min, unsigned max) {
  unsigned parsed = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (ec != std::errc() || ptr != value.data() + value.size() || parsed < min || parsed > max) {
    return make_error(ErrorCode::invalid_argument, "\"" + std::string(value) + "\" is not a whole number in " +
                                                       std::to_string(min) + ".." + std::to_string(max));
  }
  target = parsed;
  return {};
}

Result<void> set_fraction(double& target, std::string_view value) {
  double parsed = -1;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (ec != std::errc() || ptr != value.data() + value.size() || !(parsed >= 0 && parsed <= 1)) {
    return make_error(ErrorCode::invalid_argument, "\"" + std::string(value) + "\" is not a number from 0 to 1");
  }
  target = parsed;
  return {};
}

std::string format_fraction(double value) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return ec == std::errc() ? std::string(text, end) : "0";
}

// Bytes within [min, max]; with `zero_allowed`, 0 too (meaning "none" or "unlimited").
struct SizeBounds {
  std::uint64_t min = 0;
  std::uint64_t max = 1ull << 40;
  bool zero_allowed = false;
};

Result<void> set_size(std::uint64_t& target, std::string_view value, SizeBounds bounds) {
  auto size = parse_size(value);
  JITCACHE_TRY(size);
  if (*size == 0 && bounds.zero_allowed) {
    target = 0;
    return {};
  }
  if (*size < bounds.min || *size > bounds.max) {
    std::string range = bounds.min == 0 ? "at most " + format_size(bounds.max)
                                        : "between " + format_size(bounds.min) + " and " + format_size(bounds.max);
    if (bounds.zero_allowed) range = "0 or " + range;
    return make_error(ErrorCode::invalid_argument, "must be " + range);
  }
  target = *size;
  return {};
}

Result<void> set_duration(std::chrono::milliseconds& target, std::string_view value, std::chrono::milliseconds min) {
  auto parsed = parse_duration(value);
  JITCACHE_TRY(parsed);
  if (*parsed < min) {
    return make_error(ErrorCode::invalid_argument,
                      "\"" + std::string(value) + "\" is shorter than the minimum " + format_duration(min));
  }
  target = *parsed;
  return {};
}

Result<void> set_log_level(std::string& target, std::string_view value) {
  static constexpr std::array<std::string_view, 7> k_levels{"trace", "debug",    "info", "warn",
                                                            "error", "critical", "off"};
  for (auto level : k_levels) {
    if (value == level) {
      target = std::string(value);
      return {};
    }
  }
  return make_error(ErrorCode::invalid_argument,
                    "\"" + std::string(value) + "\" is not one of trace, debug, info, warn, error, critical, off");
}

// The names daemon/store/eviction_order.hpp knows (a test keeps the two in step; config may not
// include the store).
Result<void> set_eviction_policy(std::string& target, std::string_view value) {
  if (value != "gdsf" && value != "lru") {
    return make_error(ErrorCode::invalid_argument, "\"" + std::string(value) + "\" is not gdsf or lru");
  }
  target = std::string(value);
  return {};
}

const std::array<ConfigKey, 67> k_config_key_table{{
    {"config", ValueKind::path, "TOML file to read before the environment and flags.",
     [](Config& c, std::string_view v) { return set_path(c.config_file, v); },
     [](const Config& c) { return c.config_file; },
     "`$XDG_CONFIG_HOME/jitcache/jitcached.toml` (user), `/etc/jitcache/jitcached.toml` (root), "
     "`$CONFIGURATION_DIRECTORY/jitcached.toml` under systemd; if present",
     false},
    {"socket", ValueKind::path, "Unix socket the daemon listens on (clients use the same variable).",
     [](Config& c, std::string_view v) { return set_path(c.socket_path, v); },
     [](const Config& c) { return c.socket_path; },
     "`$XDG_RUNTIME_DIR/jitcache/jitcached.sock` (user; `/run/user/<uid>/…` or `/tmp/jitcache-<uid>/…` when "
     "unset), `$RUNTIME_DIRECTORY/jitcached.sock` under systemd, `/run/jitcache/jitcached.sock` (root)"},
    {"socket_group", ValueKind::group,
     "Group allowed to connect: the socket is created mode 0660 and its directory 0750 with this group "
     "(a name or a number). Empty: the daemon's own group, so only its user (and root) can connect.",
     [](Config& c, std::string_view v) -> Result<void> {
       c.socket_group = std::string(v);
       return {};
     },
     [](const Config& c) { return c.socket_group; }},
    {"state_dir", ValueKind::path, "Directory holding the database (`jitcache.db`) and the instance lock.",
     [](Config& c, std::string_view v) { return set_path(c.state_dir, v); },
     [](const Config& c) { return c.state_dir; },
     "`$XDG_STATE_HOME/jitcache` (user; `~/.local/state/jitcache` when unset), `$STATE_DIRECTORY` under "
     "systemd, `/var/lib/jitcache` (root)"},
    {"foreground", ValueKind::boolean,
     "Stay in the foreground and log to stderr; otherwise detach once ready and log to `<state_dir>/jitcached.log`.",
     [](Config& c, std::string_view v) { return set_bool(c.foreground, v); },
     [](const Config& c) { return std::string(c.foreground ? "true" : "false"); }},
    {"log_level", ValueKind::log_level, "trace, debug, info, warn, error, critical or off.",
     [](Config& c, std::string_view v) { return set_log_level(c.log_level, v); },
     [](const Config& c) { return c.log_level; }},
    {"metrics_listen", ValueKind::address,
     "Serve Prometheus metrics over HTTP at `http://<address>/metrics` (docs/operations.md \"Monitoring\"). "
     "Loopback only: `127.0.0.1:9464`, `[::1]:9464` or `localhost:9464`; port `0` picks a free one (logged). "
     "Or `unix:/run/jitcache/metrics.sock`: a Unix socket, mode 0660 with the group of the main socket, so "
     "only that group can scrape (any local user can reach a loopback port). Empty: no endpoint.",
     [](Config& c, std::string_view v) -> Result<void> {
       if (!v.empty()) {
         JITCACHE_TRY(config::parse_listen_address(v));
       }
       c.metrics_listen = std::string(v);
       return {};
     },
     [](const Config& c) { return c.metrics_listen; }},
    {"metrics_per_uid", ValueKind::boolean,
     "Label the metrics' bytes and entries by namespace with each uid (the 20 largest, the rest as `other`). "
     "`false`: only `shared` and `users` (every uid's namespace summed), so a scrape tells nothing about "
     "what one user stores.",
     [](Config& c, std::string_view v) { return set_bool(c.metrics_per_uid, v); },
     [](const Config& c) { return std::string(c.metrics_per_uid ? "true" : "false"); }},
    {"max_frame_bytes", ValueKind::size,
     "Largest request payload accepted (and so the largest image); checked before anything is allocated.",
     [](Config& c, std::string_view v) {
       return set_size(c.max_frame_bytes, v, SizeBounds{1u << 20, 1ull << 30});
     },
     [](const Config& c) { return format_size(c.max_frame_bytes); }},
    {"idle_timeout", ValueKind::duration, "A connection with no request for this long is closed.",
     [](Config& c, std::string_view v) { return set_duration(c.idle_timeout, v, std::chrono::milliseconds(100)); },
     [](const Config& c) { return format_duration(c.idle_timeout); }},
    {"read_deadline", ValueKind::duration,
     "Once the first byte of a request has arrived, the whole request must arrive within this time.",
     [](Config& c, std::string_view v) { return set_duration(c.read_deadline, v, std::chrono::milliseconds(100)); },
     [](const Config& c) { return format_duration(c.read_deadline); }},
    {"write_deadline", ValueKind::duration, "A reply the client does not read within this time ends the connection.",
     [](Config& c, std::string_view v) { return set_duration(c.write_deadline, v, std::chrono::milliseconds(100)); },
     [](const Config& c) { return format_duration(c.write_deadline); }},
    {"drain_timeout", ValueKind::duration,
     "On SIGTERM/SIGINT/SIGHUP, how long in-flight requests may take to finish before connections are cut.",
     [](Config& c, std::string_view v) { return set_duration(c.drain_timeout, v, std::chrono::milliseconds(0)); },
     [](const Config& c) { return format_duration(c.drain_timeout); }},
    {"usage_flush_interval", ValueKind::duration,
     "How often hit counts and last-use times kept in memory are written to the database.",
     [](Config& c, std::string_view v) {
       return set_duration(c.usage_flush_interval, v, std::chrono::milliseconds(100));
     },
     [](const Config& c) { return format_duration(c.usage_flush_interval); }},
    {"worker_threads", ValueKind::count,
     "Threads serving connections: socket I/O and the reads (LOOKUP, LIST, STATS), each with its own SQLite "
     "read connection. The accept loop has a thread of its own; PUT, REMOVE, REPORT_FAILURE and GC go to the "
     "one writer thread.",
     [](Config& c, std::string_view v) { return set_count(c.worker_threads, v, 1, 64); },
     [](const Config& c) { return std::to_string(c.worker_threads); }},
    {"max_connections", ValueKind::count, "Connections served at once; one more is answered `busy` and closed.",
     [](Config& c, std::string_view v) { return set_count(c.max_connections, v, 1, 65536); },
     [](const Config& c) { return std::to_string(c.max_connections); }},
    {"max_connections_per_uid", ValueKind::count,
     "Connections one uid may have open at once; one more is answered `busy` and closed, and the others' "
     "connections are not affected. `0`: no limit but max_connections.",
     [](Config& c, std::string_view v) { return set_count(c.max_connections_per_uid, v, 0, 65536); },
     [](const Config& c) { return std::to_string(c.max_connections_per_uid); }},
    {"request_bytes_per_uid", ValueKind::size,
     "Payload bytes of the requests one uid's connections may be sending or having served at once, counted "
     "from each request's header (before anything is allocated for it) until its reply is ready. A request "
     "over it is answered `busy` (its payload is read and dropped, the connection stays usable); a request "
     "of at most 64 KiB needs no budget. `0`: no limit but request_bytes_total.",
     [](Config& c, std::string_view v) {
       return set_size(c.request_bytes_per_uid, v, SizeBounds{1u << 20, 1ull << 40, true});
     },
     [](const Config& c) { return format_size(c.request_bytes_per_uid); }},
    {"request_bytes_total", ValueKind::size, "As request_bytes_per_uid, for all uids together. `0`: no limit.",
     [](Config& c, std::string_view v) {
       return set_size(c.request_bytes_total, v, SizeBounds{1u << 20, 1ull << 40, true});
     },
     [](const Config& c) { return format_size(c.request_bytes_total); }},
    {"trusted_users", ValueKind::user_list,
     "Users (names or uids) trusted like root: their PUTs go to the shared namespace that every client loads "
     "from, their failure reports quarantine shared entries at once, and they may list, remove, GC and verify "
     "everything. Root and the daemon's own user are always trusted. Unknown names stop the daemon at start.",
     [](Config& c, std::string_view v) -> Result<void> {
       c.trusted_users = std::string(v);
       return {};
     },
     [](const Config& c) { return c.trusted_users; }},
    {"trusted_groups", ValueKind::group_list,
     "Groups (names or gids) whose members are trusted as trusted_users are: the peer's primary group or any "
     "of its supplementary groups when it connected.",
     [](Config& c, std::string_view v) -> Result<void> {
       c.trusted_groups = std::string(v);
       return {};
     },
     [](const Config& c) { return c.trusted_groups; }},
    {"namespace_quota", ValueKind::size,
     "Most bytes of stored images an untrusted uid's own namespace holds (what it PUT with its own driver). A "
     "PUT that would go over it first evicts that uid's least recently used entries, down to 90% of it; an "
     "image larger than it is refused (`too_large`). `0`: no quota.",
     [](Config& c, std::string_view v) {
       return set_size(c.namespace_quota, v, SizeBounds{1u << 20, 1ull << 50, true});
     },
     [](const Config& c) { return format_size(c.namespace_quota); }},
    {"report_quorum", ValueKind::count,
     "Distinct untrusted uids that must report a shared entry failing to load before it is quarantined for "
     "everyone; until then each reporter alone stops being served it. A trusted uid's report quarantines at "
     "once. `1`: any uid's report quarantines.",
     [](Config& c, std::string_view v) { return set_count(c.report_quorum, v, 1, 1000); },
     [](const Config& c) { return std::to_string(c.report_quorum); }},
    {"reports_per_minute", ValueKind::count,
     "Failure reports (REPORT_FAILURE) one untrusted uid may send a minute, with as many at once; more are "
     "answered `busy`. `0`: no limit.",
     [](Config& c, std::string_view v) { return set_count(c.reports_per_minute, v, 0, 1000000); },
     [](const Config& c) { return std::to_string(c.reports_per_minute); }},
    {"hot_cache_size", ValueKind::size,
     "Memory for the verified images of recently served entries, so that a repeated LOOKUP hit neither reads "
     "the database nor hashes the image again. Least recently used images go first; each also counts 256 bytes "
     "of bookkeeping. `0` turns the cache off.",
     [](Config& c, std::string_view v) { return set_size(c.hot_cache_size, v, SizeBounds{}); },
     [](const Config& c) { return format_size(c.hot_cache_size); }},
    {"store_mmap_size", ValueKind::size,
     "How much of the database file each read connection maps into memory (SQLite `mmap_size`), so a lookup "
     "reads pages in place instead of copying them through `pread`. `0`: no mapping. SQLite maps at most "
     "2 GiB however large this is. With a mapping, an I/O error reading the file ends the daemon (SIGBUS) "
     "instead of failing one request: docs/operations.md.",
     [](Config& c, std::string_view v) { return set_size(c.store_mmap_size, v, SizeBounds{}); },
     [](const Config& c) { return format_size(c.store_mmap_size); }},
    {"max_size", ValueKind::size,
     "Most bytes of stored images the database holds. A PUT that would go over it first evicts the entries of "
     "stale drivers, then others in the order of eviction_policy, down to 90% of it; a single image larger than "
     "it is refused (`too_large`). Quarantined entries count. `0`: unlimited.",
     [](Config& c, std::string_view v) {
       return set_size(c.max_size, v, SizeBounds{1u << 20, 1ull << 50, true});
     },
     [](const Config& c) { return format_size(c.max_size); }},
    {"stale_driver_after", ValueKind::duration,
     "Entries keyed to a driver (driver_api and driver_build) that no LOOKUP, COMPILE or PUT has named for this "
     "long are stale: eviction and `jitcache gc` remove them first, and `jitcache ls --stale` lists them. `0`: "
     "drivers never go stale.",
     [](Config& c, std::string_view v) { return set_duration(c.stale_driver_after, v, std::chrono::milliseconds(0)); },
     [](const Config& c) { return format_duration(c.stale_driver_after); }},
    {"eviction_policy", ValueKind::eviction_policy,
     "Which entries go first when the store is over max_size (after those of stale drivers). `gdsf` "
     "(GreedyDual-Size-Frequency): the ones worth the fewest compile seconds per stored byte, counting each "
     "entry's hits and recorded compile time, with recency (docs/operations.md \"Capacity\"). `lru`: the least "
     "recently used. Any other name stops the daemon at start.",
     [](Config& c, std::string_view v) { return set_eviction_policy(c.eviction_policy, v); },
     [](const Config& c) { return c.eviction_policy; }},
    {"publish", ValueKind::boolean,
     "Publish read-only copies of shared entries in `<socket>.published/`, so that a client loads a hit "
     "without a round trip to the daemon (docs/architecture.md \"Published images\"). The directory is "
     "removed and made afresh at start, mode 0750 with the socket's group.",
     [](Config& c, std::string_view v) { return set_bool(c.publish, v); },
     [](const Config& c) { return std::string(c.publish ? "true" : "false"); }},
    {"publish_size", ValueKind::size,
     "Most bytes of published files. They live on the socket's filesystem, usually a tmpfs (memory); the "
     "least recently used go first.",
     [](Config& c, std::string_view v) { return set_size(c.publish_size, v, SizeBounds{}); },
     [](const Config& c) { return format_size(c.publish_size); }},
    {"publish_max_image", ValueKind::size,
     "Largest image published; larger ones are served through the socket only. The default is an eighth of "
     "the default `publish_size`, so that one huge image cannot push out most of the small ones.",
     [](Config& c, std::string_view v) {
       return set_size(c.publish_max_image, v, SizeBounds{0, 1ull << 30});
     },
     [](const Config& c) { return format_size(c.publish_max_image); }},
    {"compression_level", ValueKind::count,
     "zstd level (1..19) at which new images are stored; `0` stores them raw. An image that compression would "
     "not make smaller is stored raw whatever the level, and entries already stored keep their codec. "
     "Compression runs on the thread serving the PUT or COMPILE, before the writer lock is taken "
     "(docs/benchmarks.md has the figures behind the default).",
     [](Config& c, std::string_view v) { return set_count(c.compression_level, v, 0, k_max_compression_level); },
     [](const Config& c) { return std::to_string(c.compression_level); }},
    {"busy_poll_us", ValueKind::count,
     "Microseconds a worker thread keeps polling its sockets on the CPU after it has run a handler, before it "
     "sleeps. A client sends its request right after connecting, so this spares the worker a second wake-up "
     "(tens to hundreds of microseconds on a virtual machine) per new connection, at the price of up to this "
     "much CPU time after each burst of work. `0` sleeps at once.",
     [](Config& c, std::string_view v) { return set_count(c.busy_poll_us, v, 0, 10000); },
     [](const Config& c) { return std::to_string(c.busy_poll_us); }},
    {"compile", ValueKind::boolean,
     "Compile misses for clients (the COMPILE op, docs/compile-service.md). `false`, or a compile worker that "
     "does not answer its start-up probe, leaves capability bit 1 clear: clients then JIT with their own driver.",
     [](Config& c, std::string_view v) { return set_bool(c.compile, v); },
     [](const Config& c) { return std::string(c.compile ? "true" : "false"); }},
    {"compile_jobs", ValueKind::count, "Compiles at once, each in its own worker process. `0`: one per core.",
     [](Config& c, std::string_view v) { return set_count(c.compile_jobs, v, 0, 1024); },
     [](const Config& c) { return std::to_string(c.compile_jobs); }, "`0` (one per core)"},
    {"compile_spare_workers", ValueKind::count,
     "Compile workers started ahead of need, each waiting for one job with nvJitLink already loaded, so that "
     "a miss does not wait ~10 ms for a worker process to start; one is started again as soon as one is "
     "taken. `0`: every compile starts its own worker.",
     [](Config& c, std::string_view v) { return set_count(c.compile_spare_workers, v, 0, 64); },
     [](const Config& c) { return std::to_string(c.compile_spare_workers); }},
    {"compile_queue", ValueKind::count,
     "Compiles waiting for a free job; one more is answered `busy` (a request a program waits for first takes "
     "the place of queued `jitcache warm` work).",
     [](Config& c, std::string_view v) { return set_count(c.compile_queue, v, 1, 1000000); },
     [](const Config& c) { return std::to_string(c.compile_queue); }},
    {"compile_queue_per_uid", ValueKind::count,
     "Compiles one uid may have queued or running at once; one more is answered `busy` and the other uids' "
     "requests are not affected. A request that joins a compile of its key already under way needs no "
     "place. `0`: no limit but compile_queue.",
     [](Config& c, std::string_view v) { return set_count(c.compile_queue_per_uid, v, 0, 1000000); },
     [](const Config& c) { return std::to_string(c.compile_queue_per_uid); }},
    {"compile_bytes_per_uid", ValueKind::size,
     "PTX bytes one uid's queued and running compiles may hold; a compile that would go over it is "
     "answered `busy`. `0`: no limit.",
     [](Config& c, std::string_view v) {
       return set_size(c.compile_bytes_per_uid, v, SizeBounds{1u << 20, 1ull << 40, true});
     },
     [](const Config& c) { return format_size(c.compile_bytes_per_uid); }},
    {"compile_max_ptx", ValueKind::size,
     "Largest PTX a COMPILE may carry; a larger one is answered `too_large` (build it with the driver's own "
     "JIT). Frames are limited by max_frame_bytes before this.",
     [](Config& c, std::string_view v) {
       return set_size(c.compile_max_ptx, v, SizeBounds{1u << 20, 1ull << 30});
     },
     [](const Config& c) { return format_size(c.compile_max_ptx); }},
    {"compile_cpu_time", ValueKind::duration,
     "CPU time one compile may use (RLIMIT_CPU of its worker, in whole seconds, rounded up); over it the "
     "worker is killed and the request answered `worker_failed`.",
     [](Config& c, std::string_view v) { return set_duration(c.compile_cpu_time, v, std::chrono::milliseconds(1000)); },
     [](const Config& c) { return format_duration(c.compile_cpu_time); }},
    {"compile_wall_time", ValueKind::duration,
     "Wall time one compile may take, from the worker's start; over it the worker is killed and the request "
     "answered `worker_failed`.",
     [](Config& c, std::string_view v) { return set_duration(c.compile_wall_time, v, std::chrono::milliseconds(100)); },
     [](const Config& c) { return format_duration(c.compile_wall_time); }},
    {"compile_memory", ValueKind::size,
     "Address space one compile worker may map (RLIMIT_AS); an allocation over it ends the compile as "
     "`worker_failed`. `0`: unlimited.",
     [](Config& c, std::string_view v) {
       return set_size(c.compile_memory, v, SizeBounds{64ull << 20, 1ull << 50, true});
     },
     [](const Config& c) { return format_size(c.compile_memory); }},
    {"compile_failure_ttl", ValueKind::duration,
     "How long a failed compile (compile error, crashed or over-limit worker) is remembered: the same key "
     "within that time gets the same answer without a second compile. `0` remembers nothing.",
     [](Config& c, std::string_view v) { return set_duration(c.compile_failure_ttl, v, std::chrono::milliseconds(0)); },
     [](const Config& c) { return format_duration(c.compile_failure_ttl); }},
    {"compile_worker", ValueKind::path, "The compile worker executable (`jitcache-compile`).",
     [](Config& c, std::string_view v) { return set_path(c.compile_worker, v); },
     [](const Config& c) { return c.compile_worker; },
     "`jitcache-compile` beside `jitcached` when it is there (a build tree), else "
     "`<libexecdir>/jitcache/jitcache-compile`"},
    {"compile_nvrtc_library", ValueKind::path,
     "The NVRTC library (`libnvrtc.so.*`, an absolute path) for NVRTC compiles the daemon runs itself: the compile "
     "worker opens it at start-up and reports its version and identity (docs/compile-service.md \"NVRTC\"; STATS "
     "`compile_nvrtc_version`), and the daemon compiles with it the NVRTC programs clients send that read nothing "
     "from disk (NVRTC_COMPILE, capability `nvrtc_compile`). Only the worker opens it, never the daemon, and no "
     "caller can name another. One "
     "that the worker cannot open as NVRTC is logged and left unused (STATS `compile_nvrtc_probe_failed`); the "
     "daemon serves without it. Empty: none.",
     [](Config& c, std::string_view v) { return set_path(c.compile_nvrtc_library, v); },
     [](const Config& c) { return c.compile_nvrtc_library; }},
    {"source_budget", ValueKind::size,
     "Most bytes (zstd-compressed) of the PTX kept for the entries the daemon compiled itself, one copy per "
     "distinct source, so that it can compile them again without a client (the re-JIT after a driver upgrade: "
     "docs/operations.md \"Upgrading the driver\"). Over it, the sources of the least recently used entries go "
     "first. `0`: no sources kept, and no re-JIT.",
     [](Config& c, std::string_view v) {
       return set_size(c.source_budget, v, SizeBounds{1u << 20, 1ull << 50, true});
     },
     [](const Config& c) { return format_size(c.source_budget); }},
    {"rejit_budget", ValueKind::duration,
     "Compile time one re-JIT batch may spend: when clients start asking for a driver build the store has no "
     "entries of (or an arch the driver has none of), the daemon compiles the previous driver's (or the other "
     "archs') hottest entries again for it, from their kept sources, at warm priority, until this much compile "
     "time would be exceeded (docs/operations.md \"Upgrading the driver\"). `0`: no re-JIT.",
     [](Config& c, std::string_view v) { return set_duration(c.rejit_budget, v, std::chrono::milliseconds(0)); },
     [](const Config& c) { return format_duration(c.rejit_budget); }},
    {"remote", ValueKind::url_list,
     "The fleet's remotes, tried in this order: `redis://[user@]host:port[/db]`, "
     "`redis+cluster://host:port[,host:port...]`, `http://host[:port]/prefix` or `https://...` (docs/operations.md "
     "\"A fleet\"). Empty: no remote tier. A URL that does not parse stops the daemon at start.",
     [](Config& c, std::string_view v) -> Result<void> {
       c.remote = std::string(v);
       return {};
     },
     [](const Config& c) { return c.remote; }},
    {"remote_password_file", ValueKind::path,
     "File whose first line is the remotes' password (Redis AUTH; HTTP basic auth as `user:password`). Never "
     "put a password in a URL.",
     [](Config& c, std::string_view v) { return set_path(c.remote_password_file, v); },
     [](const Config& c) { return c.remote_password_file; }},
    {"remote_ca_file", ValueKind::path,
     "CA certificates (PEM) an `https://` remote's certificate may chain to, besides the system's.",
     [](Config& c, std::string_view v) { return set_path(c.remote_ca_file, v); },
     [](const Config& c) { return c.remote_ca_file; }},
    {"remote_timeout", ValueKind::duration,
     "How long a local miss waits for the remotes, all together, before it goes on as a miss (a hit never "
     "waits longer).",
     [](Config& c, std::string_view v) { return set_duration(c.remote_timeout, v, std::chrono::milliseconds(1)); },
     [](const Config& c) { return format_duration(c.remote_timeout); }},
    {"remote_signing_key", ValueKind::path,
     "This builder's ed25519 private key (`jitcache keygen`; mode 0600, owned by the daemon's user). Without "
     "one the daemon uploads nothing and takes no fleet leases.",
     [](Config& c, std::string_view v) { return set_path(c.remote_signing_key, v); },
     [](const Config& c) { return c.remote_signing_key; }},
    {"remote_trusted_keys", ValueKind::path_list,
     "Public keys whose signed entries are served (several, for rotation). A host's own key is trusted too.",
     [](Config& c, std::string_view v) -> Result<void> {
       c.remote_trusted_keys = std::string(v);
       return {};
     },
     [](const Config& c) { return c.remote_trusted_keys; }},
    {"remote_max_image", ValueKind::size,
     "The largest image read from or written to a remote; a record naming a larger one is rejected unread.",
     [](Config& c, std::string_view v) {
       return set_size(c.remote_max_image, v, SizeBounds{1u << 16, 1ull << 32});
     },
     [](const Config& c) { return format_size(c.remote_max_image); }},
    {"remote_verify_sample", ValueKind::fraction,
     "The fraction (0 to 1) of remote hits compiled again here in the background and compared byte for byte; a "
     "mismatch quarantines the entry here and logs its signer.",
     [](Config& c, std::string_view v) { return set_fraction(c.remote_verify_sample, v); },
     [](const Config& c) { return format_fraction(c.remote_verify_sample); }},
    {"remote_lease_ttl", ValueKind::duration,
     "Lifetime of a fleet compile lease; its holder renews it every third of this while it compiles, so a "
     "builder that dies frees the key within this time.",
     [](Config& c, std::string_view v) { return set_duration(c.remote_lease_ttl, v, std::chrono::milliseconds(500)); },
     [](const Config& c) { return format_duration(c.remote_lease_ttl); }},
    {"remote_upload_queue", ValueKind::count,
     "Entries waiting to be uploaded at most; one more is dropped (`upload_drops`).",
     [](Config& c, std::string_view v) { return set_count(c.remote_upload_queue, v, 1, 65536); },
     [](const Config& c) { return std::to_string(c.remote_upload_queue); }},
    {"remote_upload_source", ValueKind::boolean,
     "Whether a builder also uploads the PTX it compiled each entry from (the `src` space), for hosts with "
     "`remote_verify_sample` above 0 to compile it again; off, nothing can be re-verified.",
     [](Config& c, std::string_view v) { return set_bool(c.remote_upload_source, v); },
     [](const Config& c) { return c.remote_upload_source ? std::string("true") : std::string("false"); }},
    {"remote_builder_wait", ValueKind::duration,
     "How long a host without a signing key, missing a key no host holds the lease of while a builder is up, "
     "waits for a builder to take it (having asked the builders to compile it) before compiling for itself (0: "
     "never waits, never asks).",
     [](Config& c, std::string_view v) { return set_duration(c.remote_builder_wait, v, std::chrono::milliseconds(0)); },
     [](const Config& c) { return format_duration(c.remote_builder_wait); }},
    {"remote_heal_rate", ValueKind::count,
     "Entries a builder uploads again per second at most because the remote lacks them (a consumer found them in "
     "no remote, or a local hit's record is gone or unusable); on a consumer, 0 also stops it asking. 0: off.",
     [](Config& c, std::string_view v) { return set_count(c.remote_heal_rate, v, 0, 10000); },
     [](const Config& c) { return std::to_string(c.remote_heal_rate); }},
    // Bundles (docs/bundle-format.md, docs/operations.md "Container images").
    {"import_dir", ValueKind::path,
     "Directory whose bundles (`*.jcb`, `jitcache export`) are imported into the shared namespace once, at "
     "start, when signed by a trusted key (`remote_trusted_keys`, or this host's `remote_signing_key`). Each "
     "bundle's digest is remembered in `<state_dir>/imported-bundles`, so a restart does not import it again; a "
     "bad bundle is logged with its reason and skipped. Empty: none.",
     [](Config& c, std::string_view v) { return set_path(c.import_dir, v); },
     [](const Config& c) { return c.import_dir; }},
    {"bundle_max_size", ValueKind::size,
     "The largest bundle imported or exported; one entry of a bundle is limited to `max_frame_bytes`, as a PUT "
     "is.",
     [](Config& c, std::string_view v) {
       return set_size(c.bundle_max_size, v, SizeBounds{1u << 20, 1ull << 44});
     },
     [](const Config& c) { return format_size(c.bundle_max_size); }},
    {"bundle_max_decoded", ValueKind::size,
     "The bytes the images one bundle import brings in may decode to (zstd), checked from each entry's recorded "
     "size before it is decoded; over it the import is refused whole (`too_large`). Entries already present, "
     "removed or repeated are not decoded and not counted.",
     [](Config& c, std::string_view v) {
       return set_size(c.bundle_max_decoded, v, SizeBounds{1u << 20, 1ull << 44});
     },
     [](const Config& c) { return format_size(c.bundle_max_decoded); }},
    {"bundle_decoded_per_uid", ValueKind::size,
     "The bytes of bundle images an untrusted uid's imports may have decoded in one hour; past it its imports "
     "are refused (`too_large`, saying when to retry) until the hour ends. Trusted callers and `import_dir` are "
     "not counted. 0: no limit.",
     [](Config& c, std::string_view v) {
       return set_size(c.bundle_decoded_per_uid, v, SizeBounds{1u << 20, 1ull << 50, true});
     },
     [](const Config& c) { return format_size(c.bundle_decoded_per_uid); }},
    {"bundle_spool_reserve", ValueKind::size,
     "Free space the bundle spools (an import's checked entries, an export before it is copied out, in the "
     "state directory) leave on its disk: an operation whose bundle could take more is refused (`no_space`) "
     "before anything is written. An untrusted uid's bundle is also at most its `namespace_quota`.",
     [](Config& c, std::string_view v) {
       return set_size(c.bundle_spool_reserve, v, SizeBounds{0, 1ull << 50, true});
     },
     [](const Config& c) { return format_size(c.bundle_spool_reserve); }},
}};

}  // namespace

std::span<const ConfigKey> config_keys() { return k_config_key_table; }

const ConfigKey* find_config_key(std::string_view name) {
  for (const auto& key : k_config_key_table) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

std::string flag_name(const ConfigKey& key) {
  std::string out = "--";
  for (char c : key.name) out.push_back(c == '_' ? '-' : c);
  return out;
}

std::string env_name(const ConfigKey& key) {
  std::string out = "JITCACHE_";
  for (char c : key.name) out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return out;
}

std::string_view kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::path: return "path";
    case ValueKind::boolean: return "boolean";
    case ValueKind::size: return "size";
    case ValueKind::duration: return "duration";
    case ValueKind::count: return "count";
    case ValueKind::log_level: return "level";
    case ValueKind::group: return "group";
    case ValueKind::user_list: return "users";
    case ValueKind::group_list: return "groups";
    case ValueKind::address: return "address";
    case ValueKind::url_list: return "URLs";
    case ValueKind::path_list: return "paths";
    case ValueKind::fraction: return "fraction";
    case ValueKind::eviction_policy: return "policy";
  }
  return "value";
}

std::string config_reference_markdown() {
  const Config defaults;
  std::string out = "| key | flag | environment | type | default | meaning |\n|---|---|---|---|---|---|\n";
  for (const auto& key : k_config_key_table) {
    std::string default_text =
        !key.default_description.empty() ? std::string(key.default_description) : "`" + key.get(defaults) + "`";
    if (default_text == "``") default_text = "(none)";
    out += "| " + std::string(key.in_file ? "`" + std::string(key.name) + "`" : "—") + " | `" + flag_name(key) +
           "` | `" + env_name(key) + "` | " + std::string(kind_name(key.kind)) + " | " + default_text + " | " +
           std::string(key.description) + " |\n";
  }
  return out;
}

}  // namespace jitcache::daemon::config
