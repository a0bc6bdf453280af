#include <daemon/startup/metrics_setup.hpp>

#include <spdlog/spdlog.h>

namespace jitcache::daemon::startup {

proto::Result<std::unique_ptr<MetricsEndpoint>> start_metrics(const config::Config& config,
                                                              const stats::Counters& counters, store::Store& store,
                                                              const compile::CompileCounters* engine,
                                                              const publish::Publisher* publisher) {
  if (config.metrics_listen.empty()) return std::unique_ptr<MetricsEndpoint>();
  // The config table checked it already; parsed again here for the address itself.
  auto address = config::parse_listen_address(config.metrics_listen);
  if (!address) return address.error();
  auto endpoint = std::make_unique<MetricsEndpoint>();
  endpoint->figures = std::make_unique<metrics::DaemonMetrics>(counters, store, engine, publisher);
  auto server = metrics::MetricsServer::open(*address, [figures = endpoint->figures.get()] { return figures->render(); });
  if (!server) return server.error();
  endpoint->server = std::move(*server);
  endpoint->server->start();
  spdlog::info("metrics on {}", endpoint->server->url());
  return endpoint;
}

}  // namespace jitcache::daemon::startup
