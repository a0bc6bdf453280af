// Starts the metrics endpoint (daemon/metrics/) when `metrics_listen` is set: binds it (a failure
// is a start-up error), logs its URL at info level ("metrics on http://127.0.0.1:9464/metrics",
// with the port the kernel chose for port 0, or "metrics on unix:/run/jitcache/metrics.sock") and
// starts its thread. A Unix socket gets the group of the main socket (config.socket_path), so the
// users who may use the cache are the ones who may scrape it.
// Thread safety: called once on the main thread at start-up.
#pragma once

#include <memory>

#include <common/result.hpp>
#include <daemon/compile/compile_counters.hpp>
#include <daemon/config/config.hpp>
#include <daemon/metrics/daemon_metrics.hpp>
#include <daemon/metrics/metrics_server.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/store.hpp>
#include <daemon/store/tenancy.hpp>

namespace jitcache::daemon::startup {

// Destroying it stops the server (its thread first), then the figures it renders from.
struct MetricsEndpoint {
  std::unique_ptr<metrics::DaemonMetrics> figures;
  std::unique_ptr<metrics::MetricsServer> server;
};

// Null when metrics_listen is empty. Everything passed in must outlive the result.
common::Result<std::unique_ptr<MetricsEndpoint>> start_metrics(const config::Config& config,
                                                               const stats::Counters& counters, store::Store& store,
                                                               store::Tenancy& tenancy,
                                                               const compile::CompileCounters* engine,
                                                               const publish::Publisher* publisher);

}  // namespace jitcache::daemon::startup
