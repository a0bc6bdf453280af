#include <daemon/metrics/daemon_metrics.hpp>

#include <algorithm>
#include <string_view>

#include <daemon/metrics/exposition.hpp>
#include <daemon/publish/publisher.hpp>

namespace jitcache::daemon::metrics {

namespace {

using Counter = std::atomic<std::uint64_t>;

std::uint64_t value(const Counter& c) { return c.load(std::memory_order_relaxed); }
double seconds(std::uint64_t microseconds) { return static_cast<double>(microseconds) / 1e6; }

void single(Exposition& out, std::string_view name, MetricType type, std::string_view help, std::uint64_t v) {
  out.family(name, type, help);
  out.sample(name, {}, v);
}

void single(Exposition& out, std::string_view name, MetricType type, std::string_view help, double v) {
  out.family(name, type, help);
  out.sample(name, {}, v);
}

std::string namespace_label(std::uint32_t namespace_id) {
  return namespace_id == store::k_shared_namespace ? "shared" : std::to_string(namespace_id);
}

}  // namespace

DaemonMetrics::DaemonMetrics(const stats::Counters& counters, store::Store& store, store::Tenancy& tenancy,
                             const compile::CompileCounters* engine, const publish::Publisher* publisher,
                             bool per_uid)
    : m_counters(counters),
      m_engine(engine),
      m_publisher(publisher),
      m_per_uid(per_uid),
      m_store_figures(store, tenancy, per_uid ? k_top_namespaces : 0) {}

std::string DaemonMetrics::render() {
  using enum MetricType;
  const stats::Counters& c = m_counters;
  Exposition out;

  out.family("jitcache_build_info", gauge, "Always 1; the daemon's version is the label.");
  out.sample("jitcache_build_info", {{"version", JITCACHE_VERSION}}, std::uint64_t{1});

  // Requests and their outcomes.
  single(out, "jitcache_requests_total", counter, "Requests handled (every op).", value(c.requests));
  single(out, "jitcache_lookup_hits_total", counter,
         "LOOKUPs that served an entry, and hits of published files (HIT_NOTE).", value(c.hits));
  {
    const std::uint64_t misses = value(c.misses);
    const std::uint64_t quarantined = value(c.misses_quarantined);
    const std::uint64_t corrupt = value(c.misses_corrupt);
    // Read one by one, the parts may run ahead of the total for an instant: never below zero.
    const std::uint64_t not_found = misses - std::min(misses, quarantined + corrupt);
    out.family("jitcache_lookup_misses_total", counter,
               "LOOKUPs (of any selector: one per load) that found nothing to serve, by reason: not_found (no entry), quarantined (only "
               "an entry a client reported as failing to load), corrupt (the image failed its checksum and was "
               "deleted).");
    out.sample("jitcache_lookup_misses_total", {{"reason", "not_found"}}, not_found);
    out.sample("jitcache_lookup_misses_total", {{"reason", "quarantined"}}, quarantined);
    out.sample("jitcache_lookup_misses_total", {{"reason", "corrupt"}}, corrupt);
  }
  single(out, "jitcache_published_hits_total", counter, "Hits served from a published file (also in hits).",
         value(c.published_hits));
  single(out, "jitcache_served_bytes_total", counter, "Image bytes sent in LOOKUP replies.", value(c.bytes_served));
  single(out, "jitcache_puts_total", counter, "Entries stored by PUT.", value(c.puts));
  single(out, "jitcache_put_bytes_total", counter, "Image bytes received by PUT (before compression).",
         value(c.put_bytes));
  {
    out.family("jitcache_request_errors_total", counter, "Replies that were not ok, by status.");
    constexpr std::string_view prefix = "errors.";
    for (const auto& [name, v] : c.snapshot()) {
      if (name.starts_with(prefix)) out.sample("jitcache_request_errors_total", {{"status", name.substr(prefix.size())}}, v);
    }
  }

  // Compiling.
  using compile::CompileCounters;
  auto engine = [this](const Counter CompileCounters::*member) -> std::uint64_t {
    return m_engine != nullptr ? value(m_engine->*member) : 0;
  };
  single(out, "jitcache_compile_requests_total", counter, "COMPILE requests with a valid key.",
         value(c.compile_requests));
  single(out, "jitcache_compiles_total", counter, "Compiles a worker ran to an end (succeeded or not).",
         engine(&CompileCounters::compiles));
  single(out, "jitcache_compile_failures_total", counter, "Compiles that ended in a compile error or a failed worker.",
         engine(&CompileCounters::compile_failures));
  single(out, "jitcache_compile_seconds_total", counter, "Wall time of the compiles, summed.",
         seconds(engine(&CompileCounters::compile_microseconds)));
  single(out, "jitcache_compile_seconds_saved_total", counter,
         "Compile time of the entries served by hits, summed: what the cache spared its clients.",
         seconds(value(c.compile_microseconds_saved)));
  single(out, "jitcache_compile_single_flight_joins_total", counter,
         "COMPILE requests that joined a compile of the same key already queued or running.",
         engine(&CompileCounters::single_flight_joins));
  single(out, "jitcache_compile_busy_total", counter, "COMPILE requests turned away because the queue was full.",
         engine(&CompileCounters::busy_rejections));
  single(out, "jitcache_compile_busy_per_uid_total", counter,
         "Of those, requests over compile_queue_per_uid or compile_bytes_per_uid.",
         engine(&CompileCounters::busy_per_tenant));
  single(out, "jitcache_compile_queue_length", gauge, "Compiles waiting for a worker.",
         engine(&CompileCounters::queue_length));
  single(out, "jitcache_compile_running", gauge, "Compiles running.", engine(&CompileCounters::running));

  // Failed loads and quarantine.
  out.family("jitcache_load_failures_total", counter,
             "Loads clients reported as failed (REPORT_FAILURE), by CUresult; codes outside a fixed table count "
             "under cu_result=\"other\".");
  for (const auto& row : c.load_failures.snapshot()) {
    out.sample("jitcache_load_failures_total",
               {{"cu_result", row.cu_result ? std::to_string(*row.cu_result) : std::string("other")},
                {"name", std::string(row.name)}},
               row.count);
  }
  single(out, "jitcache_quarantines_total", counter, "Entries quarantined by a failure report.", value(c.quarantines));
  single(out, "jitcache_failure_reports_held_total", counter,
         "Untrusted reports of a shared entry short of report_quorum: hidden from the reporter only.",
         value(c.reports_held));
  single(out, "jitcache_failure_reports_rate_limited_total", counter,
         "Failure reports refused over reports_per_minute.", value(c.reports_rate_limited));

  // The store.
  const StoreFigures& figures = m_store_figures.get();
  if (figures.totals) {
    const store::Totals& t = *figures.totals;
    single(out, "jitcache_entries", gauge, "Entries stored, quarantined ones included.", t.entries);
    single(out, "jitcache_entries_quarantined", gauge, "Entries quarantined now.", t.entries_quarantined);
    single(out, "jitcache_stored_bytes", gauge, "Bytes of stored images (after compression).", t.bytes_stored);
    single(out, "jitcache_raw_bytes", gauge, "Bytes of stored images before compression.", t.bytes_raw);
    single(out, "jitcache_max_size_bytes", gauge, "The max_size limit on stored bytes; 0: unlimited.", t.max_size);
    single(out, "jitcache_evictions_total", counter, "Entries evicted to stay within max_size, and by GC.",
           t.evictions);
    single(out, "jitcache_evicted_bytes_total", counter, "Stored bytes evicted.", t.evicted_bytes);
    single(out, "jitcache_quota_evictions_total", counter,
           "Entries evicted to keep an untrusted uid's namespace within namespace_quota.", t.quota_evictions);
    single(out, "jitcache_corrupt_entries_total", counter,
           "Entries whose image failed its checksum (found by a lookup or VERIFY) and was deleted.",
           t.corrupt_entries);
    single(out, "jitcache_store_resets_total", counter,
           "Times the database was found corrupt, set aside and replaced by an empty one.", t.store_resets);
    single(out, "jitcache_store_reopens_total", counter,
           "Times the database's files were deleted or replaced under the daemon and the store reopened.",
           t.store_reopens);
    single(out, "jitcache_usage_pending", gauge, "Usage records (hits, drivers in use) kept for the next flush.",
           t.usage_pending);
    single(out, "jitcache_usage_dropped_total", counter,
           "Usage records dropped because too many were pending (a flush failing, or made-up drivers).",
           t.usage_dropped);
    single(out, "jitcache_hot_cache_hits_total", counter, "Lookups served from the in-memory image cache.",
           t.hot_cache_hits);
    single(out, "jitcache_hot_cache_misses_total", counter, "Lookups of live entries that read the database.",
           t.hot_cache_misses);
    single(out, "jitcache_hot_cache_bytes", gauge, "Bytes held by the in-memory image cache.", t.hot_cache_bytes);
  }
  if (figures.namespaces) {
    const store::NamespaceTotals& n = *figures.namespaces;
    // Without per_uid the store was asked for no uid by name (top 0): `largest` is the shared
    // namespace alone and `other` sums every uid's.
    const std::string_view rest = m_per_uid ? "other" : "users";
    out.family("jitcache_namespace_stored_bytes", gauge,
               m_per_uid
                   ? "Stored bytes by namespace: shared, a uid's own, or other (the namespaces beyond the largest few)."
                   : "Stored bytes by namespace: shared, or users (every uid's own namespace summed; metrics_per_uid "
                     "names them).");
    for (const auto& usage : n.largest) {
      out.sample("jitcache_namespace_stored_bytes", {{"namespace", namespace_label(usage.namespace_id)}},
                 usage.bytes_stored);
    }
    out.sample("jitcache_namespace_stored_bytes", {{"namespace", std::string(rest)}}, n.other.bytes_stored);
    out.family("jitcache_namespace_entries", gauge, "Entries by namespace, as jitcache_namespace_stored_bytes.");
    for (const auto& usage : n.largest) {
      out.sample("jitcache_namespace_entries", {{"namespace", namespace_label(usage.namespace_id)}}, usage.entries);
    }
    out.sample("jitcache_namespace_entries", {{"namespace", std::string(rest)}}, n.other.entries);
  }

  // Published images.
  const publish::PublisherStats published = m_publisher != nullptr ? m_publisher->stats() : publish::PublisherStats{};
  single(out, "jitcache_published_images", gauge, "Files in the published directory.", published.published_images);
  single(out, "jitcache_published_bytes", gauge, "Bytes of those files.", published.published_bytes);
  single(out, "jitcache_publish_failures_total", counter, "Published files that could not be written.",
         published.publish_failures);

  // Connections.
  single(out, "jitcache_connections", gauge, "Client connections open now.", value(c.connections));
  single(out, "jitcache_connections_total", counter, "Client connections accepted.", value(c.connections_total));
  single(out, "jitcache_connections_refused_total", counter,
         "Connections answered busy at max_connections or max_connections_per_uid.", value(c.connections_refused));
  single(out, "jitcache_connections_refused_per_uid_total", counter,
         "Of those, connections over max_connections_per_uid.", value(c.connections_refused_per_uid));
  single(out, "jitcache_accept_failures_total", counter, "Accepts that failed (out of descriptors); accepting paused.",
         value(c.accept_failures));
  single(out, "jitcache_requests_refused_bytes_total", counter,
         "Requests answered busy over request_bytes_per_uid or request_bytes_total.", value(c.requests_refused_bytes));
  single(out, "jitcache_requests_refused_bytes_per_uid_total", counter,
         "Of those, requests over request_bytes_per_uid.", value(c.requests_refused_bytes_per_uid));
  single(out, "jitcache_images_by_descriptor_failed_total", counter,
         "LOOKUP hits asked for by descriptor that were sent as bytes: no memfd could be made.",
         value(c.images_by_descriptor_failed));
  out.family("jitcache_connections_dropped_total", counter,
             "Connections the daemon closed: idle (idle_timeout), deadline (read or write deadline), protocol "
             "(an unreadable frame).");
  out.sample("jitcache_connections_dropped_total", {{"reason", "idle"}}, value(c.dropped_idle));
  out.sample("jitcache_connections_dropped_total", {{"reason", "deadline"}}, value(c.dropped_deadline));
  out.sample("jitcache_connections_dropped_total", {{"reason", "protocol"}}, value(c.dropped_protocol));

  // Latency.
  out.family("jitcache_request_duration_seconds", histogram,
             "Time from a request's frame read to its reply written, by op (a COMPILE's includes the compile).");
  std::vector<std::string_view> le;
  for (const auto& bucket : stats::k_latency_buckets) le.push_back(bucket.le);
  for (std::size_t slot = 0; slot < stats::k_latency_op_slots; ++slot) {
    const stats::LatencySnapshot s = c.latency.snapshot(slot);
    out.histogram("jitcache_request_duration_seconds", {{"op", std::string(stats::latency_slot_name(slot))}}, le,
                  s.buckets, seconds(s.sum_us));
  }
  return out.take();
}

}  // namespace jitcache::daemon::metrics
