// The daemon's configuration: one struct, filled from defaults, then the TOML file, then JITCACHE_*
// environment variables, then command-line flags (later sources win). Every key is described once,
// in config_table.cpp, and flags, env vars, the file parser and docs/configuration.md all come from
// that table. Thread safety: built once at start-up, then read-only.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <daemon/config/compression_level.hpp>

namespace jitcache::daemon::config {

struct Config {
  std::string config_file;  // empty: none given (and no default file found)
  std::string socket_path;
  std::string socket_group;  // empty: the daemon's own group
  std::string state_dir;
  bool foreground = false;
  std::string log_level = "info";
  std::string metrics_listen;  // empty: no metrics endpoint (daemon/metrics/)
  // Rationale: off, because any local user can scrape a loopback port, and bytes by uid say who
  // compiles what; an operator who wants them per uid says so (or serves metrics on a Unix socket).
  bool metrics_per_uid = false;
  std::uint64_t max_frame_bytes = 64ull << 20;
  std::chrono::milliseconds idle_timeout{60'000};
  std::chrono::milliseconds read_deadline{30'000};
  std::chrono::milliseconds write_deadline{30'000};
  std::chrono::milliseconds drain_timeout{10'000};
  std::chrono::milliseconds usage_flush_interval{5'000};
  unsigned worker_threads = 4;
  unsigned max_connections = 1024;
  // Tenants (docs/security.md). Lists are comma-separated names or numbers (a TOML array in the
  // file), resolved at start.
  std::string trusted_users;
  std::string trusted_groups;
  // Rationale: a quarter of max_connections, so four tenants at their limit still leave room; a
  // program holds one connection (its hit notes a second for a moment), so 256 covers 256
  // processes of one user at once, more than ranks of a job on one GPU host.
  unsigned max_connections_per_uid = 256;
  // Payload bytes of requests being received or held at once (policy/request_bytes_budget.hpp).
  // Rationale: per uid, four frames of the largest default size, or a hundred PUTs of the 0.2 to
  // 2 MB cubins a program makes, at once; in total, four such uids. A request of at most 64 KiB
  // (every LOOKUP, STATS, ...) needs no budget, so a uid at its budget can still look up.
  std::uint64_t request_bytes_per_uid = 256ull << 20;  // 0: none
  std::uint64_t request_bytes_total = 1ull << 30;      // 0: none
  // Rationale: 1 GiB, a tenth of max_size: its own namespace holds only what a uid built with its
  // own driver (the daemon's compiles are shared), some thousands of cubins.
  std::uint64_t namespace_quota = 1ull << 30;  // bytes; 0: none
  // Rationale: 3, so that two colluding uids cannot take an entry from everyone, while a real
  // defect is quarantined once a few users hit it; each reporter stops being served it at once.
  unsigned report_quorum = 3;
  unsigned reports_per_minute = 60;             // per untrusted uid; 0: unlimited
  std::uint64_t hot_cache_size = 256ull << 20;  // bytes; 0: no hot image cache
  std::uint64_t store_mmap_size = 2ull << 30;   // bytes of the database each reader maps; 0: none
  // Capacity (docs/operations.md "Capacity").
  // Rationale: bounded by default, because the cache runs for months with no one watching. 10 GiB
  // holds some 5 000 to 50 000 cubins of 0.2 to 2 MB (many applications, several archs and drivers
  // each) and is a small share of a GPU host's disk; ccache's own default is 5 GB of objects.
  std::uint64_t max_size = 10ull << 30;  // bytes; 0: unlimited
  // Rationale: a week, so a driver not asked for over a weekend or a holiday is not dropped, while
  // the images of a driver that was upgraded away go within days rather than by age alone.
  std::chrono::milliseconds stale_driver_after{7 * 24 * 3'600'000LL};  // 0: never stale
  // Which entries go first when the store is over max_size (eviction.hpp): "gdsf" keeps the ones
  // worth the most compile seconds per stored byte, with recency; "lru" the most recently used.
  std::string eviction_policy = "gdsf";
  // Sources kept for what the daemon compiled, so it can compile an entry again without a client
  // (a driver upgrade's re-JIT): zstd-compressed bytes at most; 0: no sources kept.
  std::uint64_t source_budget = 256ull << 20;
  // Compile seconds the daemon may spend re-compiling the previous driver's (or another arch's) hot
  // set for a driver build or arch clients start asking for; 0: no re-JIT.
  std::chrono::milliseconds rejit_budget{600'000};
  // Bundles (docs/bundle-format.md) found in this directory are imported once at start; empty: none.
  std::string import_dir;
  // The largest bundle imported or exported (docs/bundle-format.md "Limits").
  std::uint64_t bundle_max_size = 4ull << 30;
  // The raw bytes one import's images may decode to, and an untrusted uid's an hour (0: no limit);
  // the disk the import spools leave free (docs/security.md "Bundles").
  std::uint64_t bundle_max_decoded = 4ull << 30;
  std::uint64_t bundle_decoded_per_uid = 16ull << 30;
  std::uint64_t bundle_spool_reserve = 1ull << 30;
  // Published images beside the socket (docs/architecture.md "Published images"); the sizes'
  // rationale is at publish::PublishSettings.
  bool publish = true;
  std::uint64_t publish_size = 64ull << 20;      // bytes of files at most
  std::uint64_t publish_max_image = 8ull << 20;  // larger images are served by socket only
  // zstd level for stored images; 0: raw. The store's own default (its rationale is there).
  unsigned compression_level = k_default_compression_level;
  unsigned busy_poll_us = 0;  // how long a worker keeps polling after it ran a handler; 0: never
  // The compile service (COMPILE, docs/compile-service.md). Defaults as CompileLimits and
  // CompileServiceConfig.
  bool compile = true;        // false: no COMPILE (capability bit 1 clear)
  unsigned compile_jobs = 0;  // compiles at once; 0: one per core
  // Rationale: one, so that a miss that comes alone, the common case, takes a worker already
  // started (a fresh one costs ~11 ms of exec and nvJitLink loading: docs/benchmarks.md "A cold
  // miss"); a burst starts the rest as before. Each spare is an idle process with nvJitLink mapped.
  unsigned compile_spare_workers = 1;
  unsigned compile_queue = 256;  // compiles waiting for a slot; one more is `busy`
  // Per uid (CompileServiceConfig): a quarter of compile_queue, so one tenant cannot fill it; and
  // PTX bytes held for its compiles, eight of the largest PTX allowed.
  unsigned compile_queue_per_uid = 64;                 // 0: none but compile_queue
  std::uint64_t compile_bytes_per_uid = 256ull << 20;  // 0: none
  // Rationale: ten times cub_kernels.ptx (3.2 MB, 65 kernels), the largest module seen; a larger
  // PTX is most likely padding, and the compile would hold its bytes for minutes.
  std::uint64_t compile_max_ptx = 32ull << 20;
  std::chrono::milliseconds compile_cpu_time{120'000};  // RLIMIT_CPU, rounded up to whole seconds
  std::chrono::milliseconds compile_wall_time{120'000};
  std::uint64_t compile_memory = 4ull << 30;              // RLIMIT_AS; 0: unlimited
  std::chrono::milliseconds compile_failure_ttl{60'000};  // 0: failures are not remembered
  std::string compile_worker;                             // empty: compile::default_worker_path()
  // The NVRTC the daemon's own NVRTC compiles use (docs/compile-service.md "NVRTC"); only the
  // compile worker opens it. Empty: none.
  std::string compile_nvrtc_library;

  // The fleet tier (docs/operations.md "A fleet"): remotes, comma-separated URLs; empty: none.
  std::string remote;
  std::string remote_password_file;  // empty: no password (the file holds one line)
  std::string remote_ca_file;        // https: CA certificates besides the system's; empty: the system's
  // Rationale: 50 ms is a LAN round trip or two plus a 2 MB image on 1 Gb/s, and a twentieth of the
  // compile a remote hit replaces at best; a dead remote costs at most this on a miss, and nothing
  // once its breaker opens.
  std::chrono::milliseconds remote_timeout{50};
  std::string remote_signing_key;   // empty: this host uploads nothing and takes no leases
  std::string remote_trusted_keys;  // comma-separated public key files
  // Rationale: four times the largest cubin seen (cub_kernels: 1.6 MB) rounded up generously; a
  // record naming more is refused before any byte of the image is read.
  std::uint64_t remote_max_image = 64ull << 20;
  double remote_verify_sample = 0;
  // Rationale: long enough that a renewal (every third of it) survives a slow remote, short enough
  // that the fleet waits at most this long for a builder that died mid-compile.
  std::chrono::milliseconds remote_lease_ttl{15'000};  // the fraction of remote hits recompiled here and compared
  // Entries waiting to go up; one more is dropped (upload_drops).
  unsigned remote_upload_queue = 256;
  // Whether a builder uploads the PTX of what it compiled (the `src` space), which only a host with
  // remote_verify_sample > 0 reads. Rationale: off by default, as in the documented layout nobody
  // re-verifies and the PTX is most of an entry's remote memory (docs/remote-layout.md "Source object").
  bool remote_upload_source = false;
  // How long a consumer that misses, finding no lease while a builder is up, waits for a builder's
  // lease or entry before it compiles for itself. Rationale: a herd reaches its hosts within a
  // few hundred ms of each other (docs/benchmarks.md "Fleet"); a key no builder is ever asked for
  // costs each consumer this once, on top of its own compile.
  std::chrono::milliseconds remote_builder_wait{2'000};
  // Entries a builder uploads again a second at most because the remote lacks them (0: the remote
  // does not heal). Rationale: a Redis restarted empty is refilled with what the fleet uses at
  // this pace, about 10 MB/s of cub-sized entries, without crowding out fresh uploads.
  unsigned remote_heal_rate = 20;

  std::string database_path() const { return state_dir + "/jitcache.db"; }
};

// The defaults that depend on who runs the daemon (design: user XDG dirs, or the system service's
// /run/jitcache and /var/lib/jitcache when run as root; systemd's RUNTIME_DIRECTORY and
// STATE_DIRECTORY win when set).
std::string default_socket_path();
std::string default_state_dir();
// $CONFIGURATION_DIRECTORY/jitcached.toml under systemd (ConfigurationDirectory=), else
// $XDG_CONFIG_HOME/jitcache/jitcached.toml for a user, /etc/jitcache/jitcached.toml for root.
std::string default_config_file();

}  // namespace jitcache::daemon::config
