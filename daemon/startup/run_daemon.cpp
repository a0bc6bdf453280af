#include <daemon/startup/run_daemon.hpp>

#include <fcntl.h>

#include <csignal>
#include <cstdio>
#include <optional>

#include <spdlog/spdlog.h>

#include <daemon/config/config_loader.hpp>
#include <daemon/config/config_table.hpp>
#include <daemon/policy/account_names.hpp>
#include <daemon/publish/published_dir.hpp>
#include <daemon/publish/publisher.hpp>
#include <daemon/server/late_stop_signals.hpp>
#include <daemon/server/memory_return.hpp>
#include <daemon/server/server.hpp>
#include <daemon/startup/bundle_setup.hpp>
#include <daemon/startup/compile_setup.hpp>
#include <daemon/startup/daemonize.hpp>
#include <daemon/startup/descriptor_limit.hpp>
#include <daemon/startup/fleet_setup.hpp>
#include <daemon/startup/logging.hpp>
#include <daemon/startup/mapped_store_fault.hpp>
#include <daemon/startup/metrics_setup.hpp>
#include <daemon/startup/sandbox_check.hpp>
#include <daemon/startup/service_manager.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <daemon/store/store_set.hpp>
#include <daemon/unix_socket/instance_lock.hpp>
#include <daemon/unix_socket/listening_socket.hpp>
#include <proto/published_image.hpp>

namespace jitcache::daemon::startup {

namespace {

class StartupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class T>
T must(common::Result<T> result, const std::string& what) {
  if (!result) throw StartupError(what + ": " + result.error().message);
  return std::move(*result);
}

void must(common::Result<void> result, const std::string& what) {
  if (!result) throw StartupError(what + ": " + result.error().message);
}

// The published images beside the socket (made after the socket is bound and its lock held, so
// a second daemon never wipes a live one's directory), or null when publishing is off. A directory
// that cannot be made is logged and the daemon serves without it: clients then use the socket.
std::unique_ptr<publish::Publisher> make_publisher(const config::Config& config, store::PublishSource& source) {
  if (!config.publish) return nullptr;
  const std::string dir = proto::published_dir_for(config.socket_path);
  auto prepared = publish::prepare_published_dir(dir, config.socket_path);
  if (!prepared) {
    spdlog::warn("publishing is off: {}", prepared.error().message);
    return nullptr;
  }
  spdlog::info("publishing shared entries in {} (at most {} bytes, images up to {} bytes)", dir, config.publish_size,
               config.publish_max_image);
  return std::make_unique<publish::Publisher>(std::move(*prepared), dir, source,
                                              publish::PublishSettings{config.publish_size, config.publish_max_image});
}

int serve(config::Config config, std::optional<InheritedSocket> inherited, std::optional<Detacher>& detacher) {
  const std::uint64_t descriptor_limit = raise_descriptor_limit();
  // Before anything is created: a name that does not resolve stops the start with the reason.
  policy::TrustPolicy trust(::geteuid(), must(policy::resolve_users(config.trusted_users), "trusted_users"),
                            must(policy::resolve_groups(config.trusted_groups), "trusted_groups"));
  if (!config.trusted_users.empty() || !config.trusted_groups.empty()) {
    spdlog::info("trusted besides root and uid {}: users [{}], groups [{}]", ::geteuid(), config.trusted_users,
                 config.trusted_groups);
  }
  must(unix_socket::make_directories(config.state_dir, 0700), "state directory");
  auto state_lock = must(unix_socket::InstanceLock::acquire_directory(config.state_dir, "jitcached.lock",
                                                                      "state directory " + config.state_dir),
                         "state directory");
  // Socket activation: systemd made the socket (its mode and group come from jitcached.socket) and
  // keeps it open across our restarts, so connections wait in its backlog instead of being refused.
  std::optional<unix_socket::ListeningSocket> own_socket;
  int listen_fd = -1;
  if (inherited) {
    listen_fd = inherited->fd;
    if (!inherited->path.empty()) config.socket_path = inherited->path;
    spdlog::info("listening on the socket systemd passed ({})", config.socket_path);
  } else {
    std::optional<gid_t> socket_group;
    if (!config.socket_group.empty()) socket_group = must(policy::resolve_group(config.socket_group), "socket_group");
    own_socket.emplace(must(unix_socket::open_listening_socket(config.socket_path, socket_group), "socket"));
    listen_fd = own_socket->fd;
  }

  store::SqliteStoreOptions store_options;
  store_options.path = config.database_path();
  // One per worker thread, and the diagnosis lane's (daemon/server/lanes.hpp), so an EXPLAIN never
  // waits for, or keeps, a LOOKUP's read connection.
  store_options.reader_count = config.worker_threads + 1;
  store_options.hot_cache_bytes = config.hot_cache_size;
  store_options.reader_mmap_bytes = static_cast<std::int64_t>(config.store_mmap_size);
  store_options.max_size_bytes = config.max_size;
  store_options.stale_driver_after = config.stale_driver_after;
  const auto eviction_order = store::eviction_order_named(config.eviction_policy);
  if (!eviction_order) {
    throw StartupError("eviction_policy: \"" + config.eviction_policy + "\" is not gdsf or lru");
  }
  store_options.eviction_order = *eviction_order;
  store_options.compression_level = static_cast<int>(config.compression_level);
  store_options.namespace_quota_bytes = config.namespace_quota;
  store_options.report_quorum = config.report_quorum;
  store_options.source_budget_bytes = config.source_budget;
  // A corrupt database is set aside and replaced, at start and while serving; files deleted under
  // the daemon are noticed and the store reopened (recovering_database.hpp).
  store_options.recover = true;
  auto store = must(store::SqliteStore::open(store_options), "store " + config.database_path());

  stats::Counters counters;
  // For the free-space figures (store_space.hpp): the database's own directory, which is the state
  // directory's.
  counters.store_directory = config.state_dir;
  // The fleet tier in front of the local store, when `remote` is set: what the server and the
  // compile path serve from and store into. Before them, and destroyed after them.
  auto fleet = must(make_fleet(config, *store, store->transfer()), "remote");
  store::Store& serving = fleet ? static_cast<store::Store&>(*fleet->store) : *store;
  // Before the compile path and the server, which offer it entries, and destroyed after them.
  auto publisher = make_publisher(config, *store);
  counters.publishing.store(publisher != nullptr ? 1 : 0);
  // Before the server, which takes compile requests into the service, and destroyed after it.
  auto compile_path = make_compile_path(config, serving, counters, publisher.get(), &store->sources());
  if (fleet) counters.fleet = fleet->tier.get();
  if (fleet && compile_path) attach_compile_path(*fleet, config, *compile_path, *store);
  if (fleet && !compile_path && config.remote_verify_sample > 0) {
    spdlog::warn("remote_verify_sample is ignored: this daemon cannot compile");
  }
  // Bundles: before the server, which serves EXPORT_BUNDLE and IMPORT_BUNDLE through it, and the
  // bundles of import_dir before the first client connects, so its first load hits.
  auto bundles = must(make_bundle_service(config, store->transfer(), counters, trust), "bundles");
  import_bundles_at_start(config, *bundles);
  // After the store and the compile path have opened their files: what is left is shared out.
  const server::DescriptorPlan descriptors =
      plan_descriptors_at_start(config, compile_path ? compile_path->service->max_concurrent() : 0, descriptor_limit);
  config.max_connections = descriptors.max_connections;
  server::ServiceHooks hooks;
  if (auto interval = ServiceManager::watchdog_interval()) {
    hooks.watchdog = [] { ServiceManager::watchdog(); };
    hooks.watchdog_interval = *interval;
  }
  hooks.stopping = [] { ServiceManager::stopping("draining"); };
  // Before the server: a SIGTERM, SIGINT or SIGHUP sent again while the server winds down or the store
  // closes does not kill the daemon (late_stop_signals.hpp).
  server::hold_stop_signals_until_exit();
  server::Server server(config, store::StoreSet(serving, *store, *store, *store, store->diagnosis()), listen_fd,
                        counters, std::move(trust), compile_path ? compile_path->requests.get() : nullptr,
                        publisher.get(), std::move(hooks), descriptors,
                        inherited ? server::SocketOwner::service_manager : server::SocketOwner::daemon, bundles.get());
  // Bound before readiness, so a port in use fails the start; scraped through the drain too, and
  // stopped after it (before the counters and the store it reads go).
  auto metrics = must(start_metrics(config, counters, *store, *store,
                                    compile_path ? &compile_path->service->counters() : nullptr, publisher.get()),
                      "metrics_listen");
  spdlog::info("jitcached {} ready on {} (state {}, pid {})", JITCACHE_VERSION, config.socket_path, config.state_dir,
               ::getpid());
  if (detacher) detacher->report_ready();
  ServiceManager::ready("serving " + config.socket_path);
  const int status = server.run();
  if (metrics) metrics->server->stop();
  return status;
}

}  // namespace

int run_daemon(int argc, char** argv) {
  config::CommandLine command_line;
  try {
    command_line = config::load_config(argc, argv);
  } catch (const config::ConfigError& e) {
    std::fprintf(stderr, "jitcached: %s\n", e.what());
    return 2;
  }
  if (command_line.exit_status) return *command_line.exit_status;
  if (command_line.print_config_reference) {
    std::printf("%s", config::config_reference_markdown().c_str());
    return 0;
  }
  const config::Config& config = command_line.config;

  // The socket writes use MSG_NOSIGNAL; ignoring SIGPIPE also covers anything else that writes.
  std::signal(SIGPIPE, SIG_IGN);
  server::keep_small_buffers_on_the_heap();

  // Before detaching: systemd passes the socket to this pid (LISTEN_PID), not to a forked child.
  auto inherited = ServiceManager::take_listening_socket();
  if (!inherited) {
    std::fprintf(stderr, "jitcached: %s\n", inherited.error().message.c_str());
    return 2;
  }

  std::optional<Detacher> detacher;
  if (config.foreground) {
    log_to_stderr(config.log_level);
  } else {
    if (auto made = unix_socket::make_directories(config.state_dir, 0700); !made) {
      std::fprintf(stderr, "jitcached: state directory: %s\n", made.error().message.c_str());
      return 1;
    }
    detacher = Detacher::detach();
    log_to_file(config.state_dir + "/jitcached.log", config.log_level);
  }
  if (!config.config_file.empty()) spdlog::info("configuration from {}", config.config_file);
  if (config.store_mmap_size > 0) {
    // Detached, the explanation goes to the log file as it was at start (stderr is /dev/null).
    const int fd =
        config.foreground ? 2 : ::open((config.state_dir + "/jitcached.log").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0) explain_mapped_store_faults(fd);
  }

  // Before anything opens: a socket family the sandbox forbids is refused with a status systemd
  // does not restart on (sandbox_check.hpp), not found later by a crash loop.
  if (auto refusal = network_refusal(config)) {
    spdlog::critical("cannot start: {}", *refusal);
    if (detacher) detacher->report_failure(*refusal);
    if (*inherited) close_waiting_connections((*inherited)->fd);
    return k_exit_sandbox_forbids;
  }
  if (auto warning = private_network_warning(config)) spdlog::warn("{}", *warning);

  try {
    return serve(config, *inherited, detacher);
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    if (detacher) detacher->report_failure(e.what());
    return 1;
  }
}

}  // namespace jitcache::daemon::startup
