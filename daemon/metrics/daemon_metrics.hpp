// What GET /metrics answers: the daemon's figures in the Prometheus text format, every metric named
// jitcache_*. They are every figure STATS reports, from the one table of figures
// (stats/counter_table.hpp: the daemon's counters, the compile service's, the store's totals, the
// publisher's), plus what only the endpoint shows: load failures by CUresult, bytes by namespace
// (shared and users, or by uid with metrics_per_uid) and request latency per op.
// docs/operations.md "Metrics" lists them. Thread safety: render() from one
// thread (the metrics thread); everything it reads is atomic or read through the thread-safe Store.
#pragma once

#include <string>

#include <daemon/compile/compile_counters.hpp>
#include <daemon/metrics/store_figures.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/store.hpp>
#include <daemon/store/tenancy.hpp>

namespace jitcache::daemon::publish {
class Publisher;
}

namespace jitcache::daemon::metrics {

class DaemonMetrics {
 public:
  // `engine`: the compile service's counters, null when the daemon cannot compile (its figures are
  // then 0). `publisher`: null when publishing is off. All must outlive this object. `per_uid`
  // (metrics_per_uid): bytes and entries by namespace name each uid; otherwise they are "shared"
  // and "users", every uid's namespace summed.
  DaemonMetrics(const stats::Counters& counters, store::Store& store, store::Tenancy& tenancy,
                const compile::CompileCounters* engine, const publish::Publisher* publisher, bool per_uid);

  std::string render();

 private:
  const stats::Counters& m_counters;
  const compile::CompileCounters* m_engine;
  const publish::Publisher* m_publisher;
  bool m_per_uid;
  StoreFiguresCache m_store_figures;
};

}  // namespace jitcache::daemon::metrics
