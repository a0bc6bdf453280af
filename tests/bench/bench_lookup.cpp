// bench_lookup: LOOKUP hits/s and per-request latency of the real jitcached, next to GET of values
// of the same sizes from a private redis-server over the same transport (a Unix socket), for a grid
// of image sizes × client counts. A program that prints figures (docs/benchmarks.md records them),
// not a timed test: it exits non-zero only when requests fail, never because a target is missed.
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include <client/src/transport/daemon_client.hpp>
#include <proto/jit_options.hpp>
#include <proto/key.hpp>

#include <tests/bench/cell_figures.hpp>
#include <tests/bench/load_runner.hpp>
#include <tests/bench/log_tail.hpp>
#include <tests/bench/lookup_report.hpp>
#include <tests/bench/lookup_targets.hpp>
#include <tests/bench/machine_info.hpp>
#include <tests/bench/process_usage.hpp>
#include <tests/bench/redis_connection.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/redis_server.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::bench {
namespace {

using client::transport::ConnectOptions;
using client::transport::DaemonClient;

// A realistic key for one driver: only the content differs between entries.
constexpr const char* k_arch = "sm_90";
constexpr std::uint32_t k_driver_api = 13000;
constexpr const char* k_driver_build = "580.159.04";
constexpr std::size_t k_source_bytes = 64;

struct BenchOptions {
  double seconds = 3.0;
  double warm_up = 0.5;
  std::vector<std::size_t> sizes{4096, 194560, 1677722};
  std::vector<unsigned> clients{1, 8, 64};
  unsigned keys = 16;
  bool no_redis = false;
  std::string socket;  // empty: start jitcached ourselves
  std::string redis_server = "redis-server";
  std::string json_path;
};

// The entries of one image size, stored in both servers before any cell of that size runs.
struct SizeDataset {
  std::size_t size = 0;
  std::vector<proto::KeyFields> keys;
  std::vector<std::string> redis_keys;  // the key id in hex, as a Redis-backed cache would key
  std::vector<std::vector<std::uint8_t>> images;
};

// Anything that stops the benchmark before it has figures to show; caught in main().
struct CannotRun : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void fill_random(std::vector<std::uint8_t>& bytes, std::mt19937_64& random) {
  for (auto& byte : bytes) byte = static_cast<std::uint8_t>(random());
}

SizeDataset make_dataset(std::size_t size, unsigned key_count) {
  // Seeded, so that every run stores the same bytes and compares like with like.
  std::mt19937_64 random(size);
  SizeDataset data;
  data.size = size;
  for (unsigned i = 0; i < key_count; ++i) {
    std::vector<std::uint8_t> source(k_source_bytes);
    fill_random(source, random);
    proto::KeyFields key;
    key.content = proto::content_digest(proto::Bytes(source));
    key.arch = k_arch;
    key.driver_api = k_driver_api;
    key.driver_build = k_driver_build;
    key.options = proto::default_option_text();
    data.redis_keys.push_back(proto::to_hex(proto::key_id(key)));
    data.keys.push_back(std::move(key));
    // A PUT stores only a cubin: random code bytes inside an sm_90 ELF of `size` bytes in all.
    const std::size_t headers = testing::min_cubin_size(testing::CubinSpec{});
    std::vector<std::uint8_t> code(size > headers ? size - headers : 0);
    fill_random(code, random);
    data.images.push_back(testing::make_cubin(testing::CubinSpec{}, code));
  }
  return data;
}

class JitcacheLookupClient final : public LoadClient {
 public:
  JitcacheLookupClient(DaemonClient client, const SizeDataset& data, std::size_t first_key)
      : m_client(std::move(client)), m_data(data), m_next(first_key % data.keys.size()) {}

  bool request(std::string& failure) override {
    const auto& key = m_data.keys[m_next];
    m_next = (m_next + 1) % m_data.keys.size();
    auto fetched = m_client.lookup(key);
    if (!fetched) {
      failure = "LOOKUP: " + fetched.error().message;
      return false;
    }
    if (!*fetched) {
      failure = "LOOKUP: a miss for a key that was PUT";
      return false;
    }
    if ((*fetched)->image.size() != m_data.size) {
      failure = "LOOKUP: an image of " + std::to_string((*fetched)->image.size()) + " bytes";
      return false;
    }
    return true;
  }

 private:
  DaemonClient m_client;
  const SizeDataset& m_data;
  std::size_t m_next;
};

class RedisGetClient final : public LoadClient {
 public:
  RedisGetClient(RedisConnection connection, const SizeDataset& data, std::size_t first_key)
      : m_connection(std::move(connection)), m_data(data), m_next(first_key % data.keys.size()) {}

  bool request(std::string& failure) override {
    const auto& key = m_data.redis_keys[m_next];
    m_next = (m_next + 1) % m_data.redis_keys.size();
    if (auto got = m_connection.get(key, m_data.size); !got) {
      failure = got.error().message;
      return false;
    }
    return true;
  }

 private:
  RedisConnection m_connection;
  const SizeDataset& m_data;
  std::size_t m_next;
};

ConnectOptions daemon_connect_options(const std::string& socket) {
  ConnectOptions options;
  options.socket_path = socket;
  // Rationale: 64 clients fetching 1.6 MB images on a 2-CPU machine can queue for a while; a
  // request that takes this long is a failure worth reporting, not a latency figure.
  options.io_timeout = std::chrono::seconds(30);
  return options;
}

DaemonClient connect_daemon(const std::string& socket) {
  auto connected = DaemonClient::connect(daemon_connect_options(socket));
  if (!connected) throw CannotRun(connected.error().message);
  return std::move(*connected);
}

RedisConnection connect_redis(const std::string& socket) {
  auto connected = RedisConnection::connect(socket);
  if (!connected) throw CannotRun(connected.error().message);
  return std::move(*connected);
}

void store_in_jitcache(DaemonClient& client, const SizeDataset& data) {
  for (std::size_t i = 0; i < data.keys.size(); ++i) {
    proto::PutRequest put;
    put.key = data.keys[i];
    put.producer = "bench_lookup";
    put.image = proto::Bytes(data.images[i]);
    put.content_fast = proto::xxh3_128(proto::Bytes(data.keys[i].content.bytes));  // every entry has a fast key
    if (auto stored = client.put(put); !stored) {
      throw CannotRun("PUT of a " + format_size(data.size) + " image failed: " + stored.error().message);
    }
    // A benchmark of wrong answers is worthless: check every entry once, byte for byte.
    auto fetched = client.lookup(data.keys[i]);
    if (!fetched || !*fetched || (*fetched)->image != data.images[i]) {
      throw CannotRun("LOOKUP after PUT did not return the stored " + format_size(data.size) + " image");
    }
  }
}

void store_in_redis(RedisConnection& connection, const SizeDataset& data) {
  for (std::size_t i = 0; i < data.keys.size(); ++i) {
    if (auto stored = connection.set(data.redis_keys[i], proto::Bytes(data.images[i])); !stored) {
      throw CannotRun("Redis " + stored.error().message);
    }
  }
}

// Runs one side of one cell and turns usage readings around its window into per-request costs.
ServerFigures measure(const BenchOptions& options, std::vector<std::unique_ptr<LoadClient>> clients,
                      std::optional<pid_t> server) {
  std::optional<ProcessUsage> server_start;
  std::optional<ProcessUsage> server_end;
  ProcessUsage own_start;
  ProcessUsage own_end;
  LoadSettings settings;
  settings.warm_up = std::chrono::duration<double>(options.warm_up);
  settings.measure = std::chrono::duration<double>(options.seconds);
  settings.at_window_start = [&] {
    if (server) server_start = process_usage(*server);
    own_start = own_usage();
  };
  settings.at_window_end = [&] {
    if (server) server_end = process_usage(*server);
    own_end = own_usage();
  };

  ServerFigures figures;
  figures.load = run_load(settings, std::move(clients));
  const auto requests = static_cast<double>(figures.load.requests);
  if (requests > 0) {
    if (server_start && server_end) {
      figures.server_cpu_us_per_request =
          static_cast<double>((server_end->cpu_time - server_start->cpu_time).count()) / requests;
      figures.server_switches_per_request =
          static_cast<double>(server_end->voluntary_switches - server_start->voluntary_switches) / requests;
    }
    figures.client_cpu_us_per_request = static_cast<double>((own_end.cpu_time - own_start.cpu_time).count()) / requests;
  }
  return figures;
}

std::string joined_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i == 0 ? "" : " ") + std::string(argv[i]);
  return line;
}

int run(const BenchOptions& options, RunDescription description) {
  // Owned here so that the servers stop (destructors) before their directories are removed.
  testing::TempDir daemon_dir("jitcache-bench");
  testing::TempDir redis_dir("jitcache-bench-redis");
  std::optional<testing::DaemonProcess> daemon;
  std::string socket = options.socket;
  if (socket.empty()) {
    daemon.emplace(daemon_dir);
    try {
      daemon->start();
    } catch (const std::exception& error) {
      throw CannotRun(std::string(error.what()) + ":\n" + log_tail(daemon->log_path()));
    }
    socket = daemon->socket_path();
    description.daemon = "started by the benchmark, --log-level warn";
  } else {
    description.daemon = "already running at " + socket;
  }
  std::optional<testing::RedisServer> redis;
  if (!options.no_redis) {
    // Only the Unix socket, so both servers are reached over the same transport; persistence off,
    // so the figures measure serving.
    testing::RedisServerOptions redis_options;
    redis_options.executable = options.redis_server;
    redis_options.unix_socket_only = true;
    redis_options.directory = redis_dir.path();
    redis.emplace(std::move(redis_options));
  }

  std::optional<pid_t> daemon_pid;
  {
    auto first = connect_daemon(socket);
    const auto hello = first.hello("bench_lookup");
    description.daemon_version =
        hello ? hello->daemon_version : "unknown (HELLO failed: " + hello.error().message + ")";
    daemon_pid = socket_peer_pid(first.connection().fd());
  }
  std::optional<pid_t> redis_pid;
  if (redis) {
    const auto version = connect_redis(redis->socket_path()).server_version();
    description.redis_version = version ? *version : "unknown";
    redis_pid = redis->pid();
  }

  print_run(std::cout, description);
  print_table_header(std::cout);
  std::vector<CellFigures> cells;
  bool any_failure = false;
  for (const auto size : options.sizes) {
    const auto data = make_dataset(size, options.keys);
    // Fresh connections: one kept from the previous size would have outlived the daemon's idle
    // timeout (1 minute by default) with long cells.
    {
      auto seeding = connect_daemon(socket);
      store_in_jitcache(seeding, data);
    }
    if (redis) {
      auto seeding = connect_redis(redis->socket_path());
      store_in_redis(seeding, data);
    }

    for (const auto client_count : options.clients) {
      CellFigures cell;
      cell.image_size = size;
      cell.clients = client_count;

      std::vector<std::unique_ptr<LoadClient>> jitcache_clients;
      for (unsigned i = 0; i < client_count; ++i) {
        jitcache_clients.push_back(std::make_unique<JitcacheLookupClient>(connect_daemon(socket), data, i));
      }
      cell.jitcache = measure(options, std::move(jitcache_clients), daemon_pid);
      any_failure = any_failure || cell.jitcache.load.failures != 0;

      if (redis) {
        std::vector<std::unique_ptr<LoadClient>> redis_clients;
        for (unsigned i = 0; i < client_count; ++i) {
          redis_clients.push_back(std::make_unique<RedisGetClient>(connect_redis(redis->socket_path()), data, i));
        }
        cell.redis = measure(options, std::move(redis_clients), redis_pid);
        any_failure = any_failure || cell.redis->load.failures != 0;
      }
      print_table_row(std::cout, cell);
      cells.push_back(std::move(cell));
    }
  }

  print_cpu_table(std::cout, cells);
  const auto checks = check_lookup_targets(cells);
  print_targets(std::cout, checks);
  if (!options.json_path.empty()) {
    std::ofstream json(options.json_path);
    json << to_json(description, cells, checks).dump(2) << "\n";
    if (!json) throw CannotRun("cannot write " + options.json_path);
    std::cout << "\nJSON written to " << options.json_path << "\n";
  }

  if (daemon) {
    if (const int status = daemon->stop(); status != 0) {
      std::cerr << "jitcached exited with status " << status << " after SIGTERM:\n"
                << log_tail(daemon->log_path()) << "\n";
      return 1;
    }
  }
  if (any_failure) {
    std::cerr << "some requests failed; the figures of the failing cells are not comparable\n";
    if (daemon) std::cerr << "jitcached log:\n" << log_tail(daemon->log_path()) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace jitcache::bench

int main(int argc, char** argv) {
  using namespace jitcache::bench;
  BenchOptions options;
  CLI::App app{
      "LOOKUP throughput and latency of jitcached against GET of a private redis-server "
      "(docs/benchmarks.md)"};
  app.add_option("--seconds", options.seconds, "Measurement window per cell, in seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warm-up", options.warm_up, "Unmeasured requests before each window, in seconds")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--sizes", options.sizes, "Image sizes in bytes, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(std::size_t{1}, std::size_t{32} << 20))
      ->capture_default_str();
  app.add_option("--clients", options.clients, "Client counts (threads, one connection each), comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  app.add_option("--keys", options.keys, "Distinct keys per image size, spread over the clients")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  app.add_flag("--no-redis", options.no_redis, "Measure jitcached only");
  app.add_option("--socket", options.socket, "Use the jitcached already listening here instead of starting one");
  app.add_option("--redis-server", options.redis_server, "The redis-server to start (looked up in PATH)")
      ->capture_default_str();
  app.add_option("--json", options.json_path, "Also write the figures as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  // A server that dies mid-run must show up as failed requests, not kill the benchmark.
  ::signal(SIGPIPE, SIG_IGN);

  RunDescription description;
  description.machine = read_machine_info();
  description.command_line = joined_command_line(argc, argv);
  description.seconds = options.seconds;
  description.warm_up_seconds = options.warm_up;
  description.keys_per_size = options.keys;
  try {
    return run(options, description);
  } catch (const std::exception& error) {
    std::cerr << "bench_lookup: " << error.what() << "\n";
    return 2;
  }
}
