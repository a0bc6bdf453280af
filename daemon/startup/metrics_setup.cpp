#include <daemon/startup/metrics_setup.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <common/result.hpp>

namespace jitcache::daemon::startup {

namespace {

// The main socket's group when it is not the daemon's own: socket_group, or under socket
// activation the group systemd gave jitcached.socket (SocketGroup=). Read from the socket itself,
// which exists by now, so both cases are one.
std::optional<gid_t> main_socket_group(const std::string& socket_path) {
  struct stat st {};
  if (::stat(socket_path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_gid == ::getegid()) return std::nullopt;
  return st.st_gid;
}

}  // namespace

common::Result<std::unique_ptr<MetricsEndpoint>> start_metrics(const config::Config& config,
                                                               const stats::Counters& counters, store::Store& store,
                                                               store::Tenancy& tenancy,
                                                               const compile::CompileCounters* engine,
                                                               const publish::Publisher* publisher) {
  if (config.metrics_listen.empty()) return std::unique_ptr<MetricsEndpoint>();
  // The config table checked it already; parsed again here for the address itself.
  auto address = config::parse_listen_address(config.metrics_listen);
  JITCACHE_TRY(address);
  auto endpoint = std::make_unique<MetricsEndpoint>();
  endpoint->figures =
      std::make_unique<metrics::DaemonMetrics>(counters, store, tenancy, engine, publisher, config.metrics_per_uid);
  auto server = metrics::MetricsServer::open(
      *address, [figures = endpoint->figures.get()] { return figures->render(); },
      address->is_unix() ? main_socket_group(config.socket_path) : std::nullopt);
  JITCACHE_TRY(server);
  endpoint->server = std::move(*server);
  endpoint->server->start();
  spdlog::info("metrics on {}", endpoint->server->url());
  return endpoint;
}

}  // namespace jitcache::daemon::startup
