// The daemon's figures, one row each, in one table that drives both of the places users read them:
// the STATS reply (PROTOCOL.md §5 STATS, `jitcache stats`) and the metrics endpoint
// (docs/operations.md "Metrics"). A row says where the figure is read from (which field of which
// struct), its STATS name, its metric family, the family's help text and whether it is a counter or
// a gauge. Names on both sides are persisted: users scrape and script them, so a row is never
// renamed, and a name once used is never given to another figure (ccache's statistics table,
// src/ccache/core/statistic.hpp, does the same for its counters).
//
// What only the endpoint shows stays out of the table, because it has no STATS name: load failures
// by CUresult, bytes by namespace, request latency per op, the build.
//
// Thread safety: the table is constant; stats_values() reads atomics one by one (a set of
// independent reads, not one instant), so call it from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <daemon/compile/compile_counters.hpp>
#include <daemon/publish/publisher.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/stats/store_space.hpp>
#include <daemon/store/store.hpp>

namespace jitcache::daemon::stats {

// Everything a figure can be read from, for one STATS reply or one scrape.
struct FigureSources {
  const Counters& counters;
  const store::Totals* totals = nullptr;             // null: unreadable now (a scrape leaves those out)
  publish::PublisherStats published{};               // zeros when publishing is off
  const compile::CompileCounters* engine = nullptr;  // null: the daemon cannot compile (its figures are 0)
  StoreSpace space{};                                // store_space(counters.store_directory), or zeros
};

// The row of errors.<status>: one figure per status but ok (Counters::errors).
struct PerStatus {
  friend constexpr bool operator==(PerStatus, PerStatus) { return true; }
};

// Which field a row reads.
using Field =
    std::variant<Counters::Counter Counters::*, std::uint64_t store::Totals::*,
                 std::uint64_t publish::PublisherStats::*,
                 compile::CompileCounters::Counter compile::CompileCounters::*, PerStatus, std::uint64_t StoreSpace::*>;

enum class FigureType { counter, gauge };

struct CounterRow {
  std::string_view stats_name;  // STATS name; for PerStatus the prefix of errors.<status name>
  Field field;
  FigureType type;
  std::string_view metric;  // the metric family its sample belongs to
  // The family's HELP text, on the family's first row; empty on the rows after it, which add
  // samples to the same family under another label value.
  std::string_view help;
  // The sample's label, when its family has one: label_name="label_value" (for PerStatus the value
  // is each status's name).
  std::string_view label_name = {};
  std::string_view label_value = {};
  // A field in microseconds: STATS also reports it in whole seconds under this name, and the metric
  // is in seconds (Prometheus's base unit).
  std::string_view stats_seconds_name = {};
  // The figure is the total of its family: its own sample is what the family's other rows leave
  // (STATS misses = not_found + quarantined + corrupt, jitcache_lookup_misses_total by reason).
  bool family_total = false;
};

// In STATS order (the order a STATS reply has always listed them in).
inline constexpr auto k_counter_table = [] {
  using enum FigureType;
  using C = Counters;
  using T = store::Totals;
  using P = publish::PublisherStats;
  using E = compile::CompileCounters;
  using S = StoreSpace;
  return std::to_array<CounterRow>({
      // The store (Store::totals).
      {.stats_name = "entries",
       .field = &T::entries,
       .type = gauge,
       .metric = "jitcache_entries",
       .help = "Entries stored, quarantined ones included."},
      {.stats_name = "bytes_raw",
       .field = &T::bytes_raw,
       .type = gauge,
       .metric = "jitcache_raw_bytes",
       .help = "Bytes of stored images before compression."},
      {.stats_name = "bytes_stored",
       .field = &T::bytes_stored,
       .type = gauge,
       .metric = "jitcache_stored_bytes",
       .help = "Bytes of stored images (after compression)."},
      {.stats_name = "entries_quarantined",
       .field = &T::entries_quarantined,
       .type = gauge,
       .metric = "jitcache_entries_quarantined",
       .help = "Entries quarantined now."},
      {.stats_name = "corrupt_entries",
       .field = &T::corrupt_entries,
       .type = counter,
       .metric = "jitcache_corrupt_entries_total",
       .help = "Entries whose image failed its checksum (found by a lookup or VERIFY) and was deleted."},
      {.stats_name = "hot_cache_hits",
       .field = &T::hot_cache_hits,
       .type = counter,
       .metric = "jitcache_hot_cache_hits_total",
       .help = "Lookups served from the in-memory image cache."},
      {.stats_name = "hot_cache_misses",
       .field = &T::hot_cache_misses,
       .type = counter,
       .metric = "jitcache_hot_cache_misses_total",
       .help = "Lookups of live entries that read the database."},
      {.stats_name = "hot_cache_bytes",
       .field = &T::hot_cache_bytes,
       .type = gauge,
       .metric = "jitcache_hot_cache_bytes",
       .help = "Bytes held by the in-memory image cache."},
      {.stats_name = "hot_cache_entries",
       .field = &T::hot_cache_entries,
       .type = gauge,
       .metric = "jitcache_hot_cache_entries",
       .help = "Images held by the in-memory image cache."},
      {.stats_name = "max_size",
       .field = &T::max_size,
       .type = gauge,
       .metric = "jitcache_max_size_bytes",
       .help = "The max_size limit on stored bytes; 0: unlimited."},
      {.stats_name = "evictions",
       .field = &T::evictions,
       .type = counter,
       .metric = "jitcache_evictions_total",
       .help = "Entries evicted to stay within max_size, and by GC."},
      {.stats_name = "evicted_bytes",
       .field = &T::evicted_bytes,
       .type = counter,
       .metric = "jitcache_evicted_bytes_total",
       .help = "Stored bytes evicted."},
      {.stats_name = "quota_evictions",
       .field = &T::quota_evictions,
       .type = counter,
       .metric = "jitcache_quota_evictions_total",
       .help = "Entries evicted to keep an untrusted uid's namespace within namespace_quota."},
      {.stats_name = "store_resets",
       .field = &T::store_resets,
       .type = counter,
       .metric = "jitcache_store_resets_total",
       .help = "Times the database was found corrupt, set aside and replaced by an empty one."},
      {.stats_name = "store_reopens",
       .field = &T::store_reopens,
       .type = counter,
       .metric = "jitcache_store_reopens_total",
       .help = "Times the database's files were deleted or replaced under the daemon and the store reopened."},
      {.stats_name = "usage_pending",
       .field = &T::usage_pending,
       .type = gauge,
       .metric = "jitcache_usage_pending",
       .help = "Usage records (hits, drivers in use) kept for the next flush."},
      {.stats_name = "usage_dropped",
       .field = &T::usage_dropped,
       .type = counter,
       .metric = "jitcache_usage_dropped_total",
       .help = "Usage records dropped because too many were pending (a flush failing, or made-up drivers)."},
      // Sources kept for the daemon's own compiles (store/sources.hpp, source_budget).
      {.stats_name = "sources",
       .field = &T::sources,
       .type = gauge,
       .metric = "jitcache_sources",
       .help = "Distinct PTX sources kept for the entries the daemon compiled."},
      {.stats_name = "source_bytes",
       .field = &T::source_bytes,
       .type = gauge,
       .metric = "jitcache_source_bytes",
       .help = "Bytes (compressed) of the kept sources, against source_budget."},
      {.stats_name = "sources_dropped",
       .field = &T::sources_dropped,
       .type = counter,
       .metric = "jitcache_sources_dropped_total",
       .help = "Sources dropped, or not kept, to stay within source_budget."},

      // Published images (Publisher::stats).
      {.stats_name = "published_images",
       .field = &P::published_images,
       .type = gauge,
       .metric = "jitcache_published_images",
       .help = "Files in the published directory."},
      {.stats_name = "published_bytes",
       .field = &P::published_bytes,
       .type = gauge,
       .metric = "jitcache_published_bytes",
       .help = "Bytes of those files."},
      {.stats_name = "publish_failures",
       .field = &P::publish_failures,
       .type = counter,
       .metric = "jitcache_publish_failures_total",
       .help = "Published files that could not be written."},

      // Requests and their outcomes (Counters).
      {.stats_name = "requests",
       .field = &C::requests,
       .type = counter,
       .metric = "jitcache_requests_total",
       .help = "Requests handled (every op)."},
      {.stats_name = "hits",
       .field = &C::hits,
       .type = counter,
       .metric = "jitcache_lookup_hits_total",
       .help = "LOOKUPs that served an entry, and hits of published files (HIT_NOTE)."},
      {.stats_name = "misses",
       .field = &C::misses,
       .type = counter,
       .metric = "jitcache_lookup_misses_total",
       .help =
           "LOOKUPs (of any selector: one per load) that found nothing to serve, by reason: not_found (no entry), quarantined (only an entry "
           "a client reported as failing to load), corrupt (the image failed its checksum and was deleted).",
       .label_name = "reason",
       .label_value = "not_found",
       .family_total = true},
      {.stats_name = "misses_quarantined",
       .field = &C::misses_quarantined,
       .type = counter,
       .metric = "jitcache_lookup_misses_total",
       .help = {},
       .label_name = "reason",
       .label_value = "quarantined"},
      {.stats_name = "misses_corrupt",
       .field = &C::misses_corrupt,
       .type = counter,
       .metric = "jitcache_lookup_misses_total",
       .help = {},
       .label_name = "reason",
       .label_value = "corrupt"},
      {.stats_name = "fast_key_lookups",
       .field = &C::fast_key_lookups,
       .type = counter,
       .metric = "jitcache_fast_key_lookups_total",
       .help = "LOOKUPs by fast key (selector 2), found or not."},
      {.stats_name = "fast_key_hits",
       .field = &C::fast_key_hits,
       .type = counter,
       .metric = "jitcache_fast_key_hits_total",
       .help = "LOOKUPs by fast key that served an entry (also in hits)."},
      {.stats_name = "images_by_descriptor",
       .field = &C::images_by_descriptor,
       .type = counter,
       .metric = "jitcache_images_by_descriptor_total",
       .help = "LOOKUP hits whose image went as a sealed memfd."},
      {.stats_name = "images_by_descriptor_failed",
       .field = &C::images_by_descriptor_failed,
       .type = counter,
       .metric = "jitcache_images_by_descriptor_failed_total",
       .help = "LOOKUP hits asked for by descriptor that were sent as bytes: no memfd could be made."},
      {.stats_name = "published_hits",
       .field = &C::published_hits,
       .type = counter,
       .metric = "jitcache_published_hits_total",
       .help = "Hits served from a published file (also in hits)."},
      {.stats_name = "puts",
       .field = &C::puts,
       .type = counter,
       .metric = "jitcache_puts_total",
       .help = "Entries stored by PUT."},
      {.stats_name = "put_bytes",
       .field = &C::put_bytes,
       .type = counter,
       .metric = "jitcache_put_bytes_total",
       .help = "Image bytes received by PUT (before compression)."},
      {.stats_name = "removes",
       .field = &C::removes,
       .type = counter,
       .metric = "jitcache_removes_total",
       .help = "Entries removed by REMOVE."},
      {.stats_name = "failure_reports",
       .field = &C::failure_reports,
       .type = counter,
       .metric = "jitcache_failure_reports_total",
       .help = "REPORT_FAILUREs whose payload and key were valid."},
      {.stats_name = "quarantines",
       .field = &C::quarantines,
       .type = counter,
       .metric = "jitcache_quarantines_total",
       .help = "Entries quarantined by a failure report."},
      {.stats_name = "reports_held",
       .field = &C::reports_held,
       .type = counter,
       .metric = "jitcache_failure_reports_held_total",
       .help = "Untrusted reports of a shared entry short of report_quorum: hidden from the reporter only."},
      {.stats_name = "reports_rate_limited",
       .field = &C::reports_rate_limited,
       .type = counter,
       .metric = "jitcache_failure_reports_rate_limited_total",
       .help = "Failure reports refused over reports_per_minute."},
      {.stats_name = "bytes_served",
       .field = &C::bytes_served,
       .type = counter,
       .metric = "jitcache_served_bytes_total",
       .help = "Image bytes sent in LOOKUP replies."},

      // Connections (Counters).
      {.stats_name = "connections",
       .field = &C::connections,
       .type = gauge,
       .metric = "jitcache_connections",
       .help = "Client connections open now."},
      {.stats_name = "connections_total",
       .field = &C::connections_total,
       .type = counter,
       .metric = "jitcache_connections_total",
       .help = "Client connections accepted."},
      {.stats_name = "connections_refused",
       .field = &C::connections_refused,
       .type = counter,
       .metric = "jitcache_connections_refused_total",
       .help = "Connections answered busy at max_connections or max_connections_per_uid."},
      {.stats_name = "connections_refused_per_uid",
       .field = &C::connections_refused_per_uid,
       .type = counter,
       .metric = "jitcache_connections_refused_per_uid_total",
       .help = "Of those, connections over max_connections_per_uid."},
      {.stats_name = "accept_failures",
       .field = &C::accept_failures,
       .type = counter,
       .metric = "jitcache_accept_failures_total",
       .help = "Accepts that failed (out of descriptors); accepting paused."},
      {.stats_name = "requests_refused_bytes",
       .field = &C::requests_refused_bytes,
       .type = counter,
       .metric = "jitcache_requests_refused_bytes_total",
       .help = "Requests answered busy over request_bytes_per_uid or request_bytes_total."},
      {.stats_name = "requests_refused_bytes_per_uid",
       .field = &C::requests_refused_bytes_per_uid,
       .type = counter,
       .metric = "jitcache_requests_refused_bytes_per_uid_total",
       .help = "Of those, requests over request_bytes_per_uid."},
      {.stats_name = "dropped_idle",
       .field = &C::dropped_idle,
       .type = counter,
       .metric = "jitcache_connections_dropped_total",
       .help = "Connections the daemon closed: idle (idle_timeout), deadline (read or write deadline), protocol (an "
               "unreadable frame).",
       .label_name = "reason",
       .label_value = "idle"},
      {.stats_name = "dropped_deadline",
       .field = &C::dropped_deadline,
       .type = counter,
       .metric = "jitcache_connections_dropped_total",
       .help = {},
       .label_name = "reason",
       .label_value = "deadline"},
      {.stats_name = "dropped_protocol",
       .field = &C::dropped_protocol,
       .type = counter,
       .metric = "jitcache_connections_dropped_total",
       .help = {},
       .label_name = "reason",
       .label_value = "protocol"},

      // Replies that were not ok (Counters::errors).
      {.stats_name = "errors.",
       .field = PerStatus{},
       .type = counter,
       .metric = "jitcache_request_errors_total",
       .help = "Replies that were not ok, by status.",
       .label_name = "status"},

      // Compiling (Counters, and the compile service's CompileCounters).
      {.stats_name = "compile_requests",
       .field = &C::compile_requests,
       .type = counter,
       .metric = "jitcache_compile_requests_total",
       .help = "COMPILE requests with a valid key."},
      {.stats_name = "compile_store_hits",
       .field = &C::compile_store_hits,
       .type = counter,
       .metric = "jitcache_compile_store_hits_total",
       .help = "COMPILE requests answered from an entry already stored."},
      {.stats_name = "compiles",
       .field = &E::compiles,
       .type = counter,
       .metric = "jitcache_compiles_total",
       .help = "Compiles a worker ran to an end (succeeded or not)."},
      {.stats_name = "compile_failures",
       .field = &E::compile_failures,
       .type = counter,
       .metric = "jitcache_compile_failures_total",
       .help = "Compiles that ended in a compile error or a failed worker."},
      {.stats_name = "compile_microseconds",
       .field = &E::compile_microseconds,
       .type = counter,
       .metric = "jitcache_compile_seconds_total",
       .help = "Wall time of the compiles, summed.",
       .stats_seconds_name = "compile_seconds"},
      {.stats_name = "single_flight_joins",
       .field = &E::single_flight_joins,
       .type = counter,
       .metric = "jitcache_compile_single_flight_joins_total",
       .help = "COMPILE requests that joined a compile of the same key already queued or running."},
      {.stats_name = "compile_refused",
       .field = &E::refused,
       .type = counter,
       .metric = "jitcache_compile_refused_total",
       .help = "COMPILE requests answered cannot_compile."},
      {.stats_name = "compile_busy",
       .field = &E::busy_rejections,
       .type = counter,
       .metric = "jitcache_compile_busy_total",
       .help = "COMPILE requests turned away because the queue was full."},
      {.stats_name = "compile_busy_per_uid",
       .field = &E::busy_per_tenant,
       .type = counter,
       .metric = "jitcache_compile_busy_per_uid_total",
       .help = "Of those, requests over compile_queue_per_uid or compile_bytes_per_uid."},
      {.stats_name = "compile_negative_hits",
       .field = &E::negative_hits,
       .type = counter,
       .metric = "jitcache_compile_negative_hits_total",
       .help = "COMPILE requests answered from a remembered failure, without compiling."},
      {.stats_name = "compile_queue_length",
       .field = &E::queue_length,
       .type = gauge,
       .metric = "jitcache_compile_queue_length",
       .help = "Compiles waiting for a worker."},
      {.stats_name = "compile_running",
       .field = &E::running,
       .type = gauge,
       .metric = "jitcache_compile_running",
       .help = "Compiles running."},
      {.stats_name = "compile_stored",
       .field = &C::compile_stored,
       .type = counter,
       .metric = "jitcache_compile_stored_total",
       .help = "Compiled images written to the store."},
      {.stats_name = "compile_microseconds_saved",
       .field = &C::compile_microseconds_saved,
       .type = counter,
       .metric = "jitcache_compile_seconds_saved_total",
       .help = "Compile time of the entries served by hits, summed: what the cache spared its clients.",
       .stats_seconds_name = "compile_seconds_saved"},

      // The set-up, as `jitcache doctor` checks it (docs/cli.md "doctor"): the compile worker's
      // start-up probe, the published directory, and the space left under the store.
      {.stats_name = "compile_worker_ready",
       .field = &C::compile_worker_ready,
       .type = gauge,
       .metric = "jitcache_compile_worker_ready",
       .help = "1 when the compile worker passed its start-up probe: the daemon compiles misses."},
      {.stats_name = "compile_worker_probe_failed",
       .field = &C::compile_worker_probe_failed,
       .type = gauge,
       .metric = "jitcache_compile_worker_probe_failed",
       .help = "1 when compiling is on but the compile worker failed its start-up probe: clients JIT misses "
               "themselves."},
      {.stats_name = "compile_nvjitlink_version",
       .field = &C::compile_nvjitlink_version,
       .type = gauge,
       .metric = "jitcache_compile_nvjitlink_version",
       .help = "The compile worker's nvJitLink, 1000 x major + 10 x minor (13000 for 13.0); 0: none."},
      {.stats_name = "publishing",
       .field = &C::publishing,
       .type = gauge,
       .metric = "jitcache_publishing",
       .help = "1 when the daemon keeps the published directory beside its socket."},
      {.stats_name = "store_free_bytes",
       .field = &S::free_bytes,
       .type = gauge,
       .metric = "jitcache_store_free_bytes",
       .help = "Bytes the daemon may still write on the filesystem that holds the store."},
      {.stats_name = "store_filesystem_bytes",
       .field = &S::filesystem_bytes,
       .type = gauge,
       .metric = "jitcache_store_filesystem_bytes",
       .help = "Size of the filesystem that holds the store."},
      {.stats_name = "explains",
       .field = &C::explains,
       .type = counter,
       .metric = "jitcache_explains_total",
       .help = "EXPLAIN requests answered (jitcache explain)."},
      // The re-JIT after a driver upgrade or a new arch (daemon/rejit/).
      {.stats_name = "rejit_batches",
       .field = &C::rejit_batches,
       .type = counter,
       .metric = "jitcache_rejit_batches_total",
       .help = "Re-JIT batches started for a new driver build or arch."},
      {.stats_name = "rejit_compiled",
       .field = &C::rejit_compiled,
       .type = counter,
       .metric = "jitcache_rejit_compiled_total",
       .help = "Entries the re-JIT compiled and stored for the new driver or arch."},
      {.stats_name = "rejit_failed",
       .field = &C::rejit_failed,
       .type = counter,
       .metric = "jitcache_rejit_failed_total",
       .help = "Re-JIT compiles that failed, were refused or busy, or found no kept source."},
      {.stats_name = "rejit_over_budget",
       .field = &C::rejit_over_budget,
       .type = counter,
       .metric = "jitcache_rejit_over_budget_total",
       .help = "Entries of a re-JIT batch left uncompiled because rejit_budget ran out."},
      {.stats_name = "rejit_compile_microseconds",
       .field = &C::rejit_compile_microseconds,
       .type = counter,
       .metric = "jitcache_rejit_compile_seconds_total",
       .help = "Compile time the re-JIT batches spent.",
       .stats_seconds_name = "rejit_compile_seconds"},
      // Bundles (docs/bundle-format.md).
      {.stats_name = "bundles_imported",
       .field = &C::bundles_imported,
       .type = counter,
       .metric = "jitcache_bundles_imported_total",
       .help = "Bundles imported (IMPORT_BUNDLE, import_dir), each in one transaction."},
      {.stats_name = "bundle_entries_imported",
       .field = &C::bundle_entries_imported,
       .type = counter,
       .metric = "jitcache_bundle_entries_imported_total",
       .help = "Entries those bundles brought in."},
      {.stats_name = "bundle_entries_skipped",
       .field = &C::bundle_entries_skipped,
       .type = counter,
       .metric = "jitcache_bundle_entries_skipped_total",
       .help = "Entries of imported bundles already present, left as they were."},
      {.stats_name = "bundle_entries_removed",
       .field = &C::bundle_entries_removed,
       .type = counter,
       .metric = "jitcache_bundle_entries_removed_total",
       .help = "Entries of bundles imported into the shared namespace skipped because an operator removed them."},
      {.stats_name = "bundles_refused",
       .field = &C::bundles_refused,
       .type = counter,
       .metric = "jitcache_bundles_refused_total",
       .help = "Bundle imports refused whole: a failed check, an untrusted signer, a limit."},
      {.stats_name = "bundles_exported",
       .field = &C::bundles_exported,
       .type = counter,
       .metric = "jitcache_bundles_exported_total",
       .help = "Bundles written by EXPORT_BUNDLE."},
      {.stats_name = "bundle_entries_exported",
       .field = &C::bundle_entries_exported,
       .type = counter,
       .metric = "jitcache_bundle_entries_exported_total",
       .help = "Entries those bundles hold."},
  });
}();

// The value of a row's field (0 for a source that is absent; not for PerStatus rows).
std::uint64_t read_field(const Field& field, const FigureSources& sources);

// Whether a row reads Store::totals, which a scrape leaves out when they cannot be read.
bool reads_totals(const CounterRow& row);

// The STATS reply's name/value pairs, in table order: a microseconds row as <stats_seconds_name>
// then <stats_name>, and errors.<status name> for every status but ok. `sources.totals` must be set.
std::vector<std::pair<std::string, std::uint64_t>> stats_values(const FigureSources& sources);

}  // namespace jitcache::daemon::stats
