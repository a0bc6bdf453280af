// The daemon's counters, reported by STATS and the metrics endpoint under the names their rows in
// counter_table.hpp give them (names are part of the protocol: never rename one).
// Thread safety: every counter is an atomic updated with relaxed ordering from any thread; a
// snapshot is a set of independent reads, not one consistent instant.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <daemon/stats/load_failures.hpp>
#include <daemon/stats/op_latency.hpp>
#include <daemon/stats/recent_misses.hpp>
#include <daemon/stats/saturating_add.hpp>
#include <proto/wire.hpp>

namespace jitcache::daemon::remote {
class RemoteTier;
}

namespace jitcache::daemon::stats {

class Counters {
 public:
  using Counter = std::atomic<std::uint64_t>;

  Counter requests{0};
  Counter hits{0};
  Counter misses{0};              // LOOKUP by key or key id prefix that found nothing
  Counter misses_quarantined{0};  // of those, where the key's only visible entry was quarantined
  Counter misses_corrupt{0};      // of those, where the entry failed its checksum and was deleted
  Counter fast_key_lookups{0};    // LOOKUP by fast key (selector 2), found or not
  Counter fast_key_hits{0};       // of those, the ones that served an entry (also counted in hits)
  Counter puts{0};
  Counter put_bytes{0};
  Counter removes{0};
  Counter failure_reports{0};  // REPORT_FAILURE requests with a valid payload and key
  Counter quarantines{0};      // of those, the ones that quarantined a live entry
  // Of those, an untrusted uid's first report of a shared entry short of report_quorum: the entry
  // is no longer served to that uid only.
  Counter reports_held{0};
  Counter reports_rate_limited{0};  // REPORT_FAILUREs over reports_per_minute, answered busy
  Counter bytes_served{0};
  Counter images_by_descriptor{0};  // LOOKUP hits whose image went to the client as a sealed memfd
  // LOOKUP hits asked for by descriptor whose memfd could not be made (e.g. EMFILE): sent as bytes.
  Counter images_by_descriptor_failed{0};
  Counter published_hits{0};                  // HIT_NOTEs of a live entry: hits of a published file (also in hits)
  Counter connections{0};                     // open now
  Counter connections_total{0};               // accepted since start
  Counter connections_refused{0};             // over max_connections or max_connections_per_uid
  Counter connections_refused_per_uid{0};     // of those, over max_connections_per_uid
  Counter accept_failures{0};                 // accept() failed (EMFILE, ENFILE, ...); accepting paused briefly
  Counter requests_refused_bytes{0};          // answered busy over request_bytes_per_uid or _total
  Counter requests_refused_bytes_per_uid{0};  // of those, over request_bytes_per_uid
  Counter dropped_idle{0};                    // closed by idle_timeout
  Counter dropped_deadline{0};                // closed by read_deadline or write_deadline
  Counter dropped_protocol{0};                // closed after an unreadable frame header
  // Summed over LOOKUP hits (and COMPILEs answered from the store): the served entry's
  // compile_time_us, what the cache spared its clients.
  Counter compile_microseconds_saved{0};
  Counter compile_requests{0};    // COMPILE requests with a valid payload and key
  Counter compile_store_hits{0};  // of those, answered from an entry already stored
  Counter compile_stored{0};      // compiled images written to the store
  // Bundles (docs/bundle-format.md): files imported (IMPORT_BUNDLE, import_dir) and exported, the
  // entries they brought in, the entries skipped because present, and imports refused whole.
  Counter bundles_imported{0};
  Counter bundle_entries_imported{0};
  Counter bundle_entries_skipped{0};
  Counter bundle_entries_removed{0};  // of those skipped: an operator removed them (schema/0011_removed_keys.sql)
  Counter bundles_refused{0};
  Counter bundles_exported{0};
  Counter bundle_entries_exported{0};
  // Re-JIT after a driver upgrade or a new arch (daemon/rejit/): batches started, entries compiled
  // for the new driver or arch, compiles that failed, and entries left because the budget ran out.
  Counter rejit_batches{0};
  Counter rejit_compiled{0};
  Counter rejit_failed{0};
  Counter rejit_over_budget{0};
  Counter rejit_compile_microseconds{0};
  // EXPLAIN requests answered.
  Counter explains{0};
  // NVRTC compiles (keys whose options are "compiler=nvrtc", docs/cache-key.md "NVRTC compiles"):
  // the same figures as above for those keys alone, which are counted there too, and the compiles
  // clients told the daemon they could not cache, by reason (NVRTC_NOTE; nvrtc_figures.hpp).
  Counter nvrtc_hits{0};
  Counter nvrtc_misses{0};
  Counter nvrtc_misses_quarantined{0};
  Counter nvrtc_misses_corrupt{0};
  Counter nvrtc_puts{0};
  Counter nvrtc_compile_microseconds_saved{0};
  Counter nvrtc_uncached_side_effect_option{0};
  Counter nvrtc_uncached_unknown_option{0};
  Counter nvrtc_uncached_unnamed_include{0};
  Counter nvrtc_uncached_unreadable_library{0};
  Counter nvrtc_uncached_compiled_before{0};
  Counter nvrtc_uncached_not_stored{0};
  Counter nvrtc_uncached_internal_error{0};
  // The set-up, as `jitcache doctor` checks it (docs/cli.md "doctor"); gauges set once at start
  // (daemon/startup/): whether the compile worker passed its start-up probe, or failed it with
  // compiling turned on (both 0: compile = false), the worker's nvJitLink as 1000 x major + 10 x
  // minor (0: none), and whether the published directory is kept.
  Counter compile_worker_ready{0};
  Counter compile_worker_probe_failed{0};
  Counter compile_nvjitlink_version{0};
  // The NVRTC the administrator configured (compile_nvrtc_library, docs/compile-service.md
  // "NVRTC"): its version as 1000 x major + 10 x minor once the worker opened it and reported its
  // identity (0: none configured, or not usable), and 1 when one is configured and failed that probe.
  Counter compile_nvrtc_version{0};
  Counter compile_nvrtc_probe_failed{0};
  Counter publishing{0};
  // The directory whose filesystem holds the store (the database's), for the free-space figures
  // (store_space.hpp); set at start, before the server runs. Empty: not measured.
  std::string store_directory;
  // For the metrics endpoint (daemon/metrics/); STATS does not report them.
  LoadFailures load_failures;  // REPORT_FAILUREs by their CUresult
  OpLatency latency;           // per op, from a request's frame read to its reply written
  // For EXPLAIN and MISSES; STATS does not report it.
  RecentMisses recent_misses;  // the last LOOKUP and COMPILE misses (recent_misses.hpp)
  // The fleet tier, whose per-remote figures STATS and the endpoint append (daemon/remote/
  // remote_figures.hpp); null without remotes. Set at start, before the server runs.
  const remote::RemoteTier* fleet = nullptr;

  // Saturates at 2^64 - 1 instead of wrapping (saturating_add.hpp says why).
  static void add(Counter& c, std::uint64_t n = 1) { saturating_add(c, n); }
  static void sub(Counter& c, std::uint64_t n = 1) { c.fetch_sub(n, std::memory_order_relaxed); }

  // Counts a reply that was not ok, under errors.<status name>.
  void count_error(proto::Status status);
  // The replies of this status counted so far (0 for a status outside the table).
  std::uint64_t errors(proto::Status status) const;

 private:
  std::array<Counter, proto::k_status_count> m_errors_by_status{};
};

}  // namespace jitcache::daemon::stats
