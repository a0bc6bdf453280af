#include <daemon/metrics/daemon_metrics.hpp>

#include <daemon/metrics/remote_families.hpp>

#include <algorithm>
#include <string_view>

#include <daemon/metrics/counter_families.hpp>
#include <daemon/metrics/exposition.hpp>
#include <daemon/publish/publisher.hpp>
#include <daemon/stats/store_space.hpp>

namespace jitcache::daemon::metrics {

namespace {

double seconds(std::uint64_t microseconds) { return static_cast<double>(microseconds) / 1e6; }

std::string namespace_label(std::uint32_t namespace_id) {
  return namespace_id == store::k_shared_namespace ? "shared" : std::to_string(namespace_id);
}

}  // namespace

DaemonMetrics::DaemonMetrics(const stats::Counters& counters, store::Store& store, store::Tenancy& tenancy,
                             const compile::CompileCounters* engine, const publish::Publisher* publisher, bool per_uid)
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

  // Every figure STATS reports, from the one table (daemon/stats/counter_table.hpp).
  const StoreFigures& figures = m_store_figures.get();
  const stats::FigureSources sources{c, figures.totals ? &*figures.totals : nullptr,
                                     m_publisher != nullptr ? m_publisher->stats() : publish::PublisherStats{},
                                     m_engine, stats::store_space(c.store_directory)};
  append_counter_families(out, sources);
  append_remote_families(out, c.fleet);

  // What only the endpoint shows: failed loads by CUresult, bytes by namespace, latency per op.
  out.family("jitcache_load_failures_total", counter,
             "Loads clients reported as failed (REPORT_FAILURE), by CUresult; codes outside a fixed table count "
             "under cu_result=\"other\".");
  for (const auto& row : c.load_failures.snapshot()) {
    out.sample("jitcache_load_failures_total",
               {{"cu_result", row.cu_result ? std::to_string(*row.cu_result) : std::string("other")},
                {"name", std::string(row.name)}},
               row.count);
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
  out.family("jitcache_request_duration_seconds", histogram,
             "Time from a request's frame read to its reply written, by op (a COMPILE's includes the compile).");
  std::vector<std::string_view> le;
  for (const auto& bucket : stats::k_latency_buckets) le.push_back(bucket.le);
  for (std::size_t slot = 0; slot < stats::k_latency_op_slots; ++slot) {
    if (!stats::is_latency_slot_shown(slot)) continue;
    const stats::LatencySnapshot s = c.latency.snapshot(slot);
    out.histogram("jitcache_request_duration_seconds", {{"op", std::string(stats::latency_slot_name(slot))}}, le,
                  s.buckets, seconds(s.sum_us));
  }
  return out.take();
}

}  // namespace jitcache::daemon::metrics
