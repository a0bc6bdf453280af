#include <daemon/startup/run_daemon.hpp>

#include <malloc.h>

#include <csignal>
#include <cstdio>
#include <optional>

#include <spdlog/spdlog.h>

#include <daemon/config/config_loader.hpp>
#include <daemon/config/config_table.hpp>
#include <daemon/server/instance_lock.hpp>
#include <daemon/server/listening_socket.hpp>
#include <daemon/server/server.hpp>
#include <daemon/startup/compile_setup.hpp>
#include <daemon/startup/daemonize.hpp>
#include <daemon/startup/logging.hpp>
#include <daemon/store/recovering_store.hpp>

namespace jitcache::daemon::startup {

namespace {

class StartupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class T>
T must(proto::Result<T> result, const std::string& what) {
  if (!result) throw StartupError(what + ": " + result.error().message);
  return std::move(*result);
}

void must(proto::Result<void> result, const std::string& what) {
  if (!result) throw StartupError(what + ": " + result.error().message);
}

// Rationale: every LOOKUP hit reads its image into a fresh buffer. Above glibc's default mmap
// threshold (128 KiB, adapting up to 32 MiB) each such buffer was a new mapping, faulted in page by
// page and unmapped again: a quarter of the daemon's CPU for 190 KB and 1.6 MB images
// (docs/benchmarks.md). Serving them from the heap, and not trimming it back after every free, lets
// the memory be reused; the cost is that up to the threshold stays mapped once used.
void keep_large_buffers_on_the_heap() {
  ::mallopt(M_MMAP_THRESHOLD, 64 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

int serve(const config::Config& config, std::optional<Detacher>& detacher) {
  must(server::make_directories(config.state_dir, 0700), "state directory");
  auto state_lock = must(server::InstanceLock::acquire(config.state_dir + "/jitcached.lock",
                                                       "state directory " + config.state_dir),
                         "state directory");
  auto listening = must(server::open_listening_socket(config.socket_path), "socket");

  store::SqliteStoreOptions store_options;
  store_options.path = config.database_path();
  store_options.reader_count = config.worker_threads;
  store_options.hot_cache_bytes = config.hot_cache_size;
  store_options.max_size_bytes = config.max_size;
  store_options.stale_driver_after = config.stale_driver_after;
  store_options.compression_level = static_cast<int>(config.compression_level);
  // RecoveringStore: a corrupt database is set aside and replaced, at start and while serving.
  auto store = must(store::RecoveringStore::open(store_options), "store " + config.database_path());

  stats::Counters counters;
  // Before the server, which takes compile requests into the service, and destroyed after it.
  auto compile_path = make_compile_path(config, *store, counters);
  server::Server server(config, *store, listening.fd, counters,
                        compile_path ? compile_path->requests.get() : nullptr);
  spdlog::info("jitcached {} ready on {} (state {}, pid {})", JITCACHE_VERSION, config.socket_path, config.state_dir,
               ::getpid());
  if (detacher) detacher->report_ready();
  return server.run();
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
  keep_large_buffers_on_the_heap();

  std::optional<Detacher> detacher;
  if (config.foreground) {
    log_to_stderr(config.log_level);
  } else {
    if (auto made = server::make_directories(config.state_dir, 0700); !made) {
      std::fprintf(stderr, "jitcached: state directory: %s\n", made.error().message.c_str());
      return 1;
    }
    detacher = Detacher::detach();
    log_to_file(config.state_dir + "/jitcached.log", config.log_level);
  }
  if (!config.config_file.empty()) spdlog::info("configuration from {}", config.config_file);

  try {
    return serve(config, detacher);
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    if (detacher) detacher->report_failure(e.what());
    return 1;
  }
}

}  // namespace jitcache::daemon::startup
