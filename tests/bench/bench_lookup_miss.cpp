// bench_lookup_miss: what a miss costs, as LOOKUP misses per second of the real jitcached over its
// Unix socket, for each way a client can look a missing key up: by fast key alone (libjitcache
// since commit 817188c: a fast-key not_found is final), by key alone, and by fast key then by key (what a
// miss took before it). Beside each cell: the daemon's CPU time per miss and how many misses
// its STATS counted per miss, so a reader sees where the search ends and what it is counted as.
// A program that prints figures (docs/benchmarks.md "The miss path"), not a timed test: it exits
// non-zero only when a request fails or a missing key is found.
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <client/src/transport/daemon_client.hpp>
#include <proto/content_digest.hpp>
#include <proto/digest.hpp>
#include <proto/jit_options.hpp>
#include <proto/key.hpp>

#include <tests/bench/load_runner.hpp>
#include <tests/bench/log_tail.hpp>
#include <tests/bench/machine_info.hpp>
#include <tests/bench/process_usage.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::bench {
namespace {

using client::transport::ConnectOptions;
using client::transport::DaemonClient;

struct BenchOptions {
  double seconds = 3.0;
  double warm_up = 0.5;
  std::vector<unsigned> clients{1, 8};
  unsigned entries = 1000;    // stored first, so that the misses walk a populated index
  unsigned miss_keys = 4096;  // distinct missing keys, walked round-robin by every client
  std::string socket;         // empty: start jitcached ourselves
};

// How a client looks up a key that is not stored.
enum class Pattern { fast_key, key, fast_then_key };

const char* pattern_name(Pattern pattern) {
  switch (pattern) {
    case Pattern::fast_key: return "fast key";
    case Pattern::key: return "key";
    case Pattern::fast_then_key: return "fast key, then key";
  }
  return "?";
}

unsigned lookups_per_miss(Pattern pattern) { return pattern == Pattern::fast_then_key ? 2 : 1; }

struct CannotRun : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The key of "source <seed>" (content digest and fast-key content of the same bytes), as a client
// would build it for one driver.
struct SampleKey {
  proto::KeyFields key;
  proto::Checksum128 content_fast;
};

SampleKey sample_key(const std::string& source) {
  SampleKey sample;
  sample.key.content = proto::content_digest(proto::as_bytes(source));
  sample.key.arch = "sm_90";
  sample.key.driver_api = 13000;
  sample.key.driver_build = "580.159.04";
  sample.key.options = proto::default_option_text();
  sample.content_fast = proto::xxh3_128(proto::as_bytes(source));
  return sample;
}

class MissClient final : public LoadClient {
 public:
  MissClient(DaemonClient client, const std::vector<SampleKey>& keys, Pattern pattern, std::size_t first)
      : m_client(std::move(client)), m_keys(keys), m_pattern(pattern), m_next(first % keys.size()) {}

  bool request(std::string& failure) override {
    const SampleKey& sample = m_keys[m_next];
    m_next = (m_next + 1) % m_keys.size();
    if (m_pattern != Pattern::key) {
      auto fetched = m_client.lookup_fast(proto::fast_key_of(sample.key, sample.content_fast));
      if (!check(fetched, "LOOKUP by fast key", failure)) return false;
    }
    if (m_pattern != Pattern::fast_key) {
      auto fetched = m_client.lookup(sample.key);
      if (!check(fetched, "LOOKUP by key", failure)) return false;
    }
    return true;
  }

 private:
  static bool check(const common::Result<std::optional<client::transport::FetchedImage>>& fetched, const char* what,
                    std::string& failure) {
    if (!fetched) {
      failure = std::string(what) + ": " + fetched.error().message;
      return false;
    }
    if (fetched->has_value()) {
      failure = std::string(what) + ": a hit for a key that was never stored";
      return false;
    }
    return true;
  }

  DaemonClient m_client;
  const std::vector<SampleKey>& m_keys;
  Pattern m_pattern;
  std::size_t m_next;
};

DaemonClient connect_daemon(const std::string& socket) {
  ConnectOptions options;
  options.socket_path = socket;
  options.io_timeout = std::chrono::seconds(30);
  auto connected = DaemonClient::connect(options);
  if (!connected) throw CannotRun(connected.error().message);
  return std::move(*connected);
}

std::uint64_t stat(DaemonClient& client, const std::string& name) {
  auto stats = client.stats();
  if (!stats) throw CannotRun("STATS: " + stats.error().message);
  for (const auto& [n, v] : stats->values) {
    if (n == name) return v;
  }
  throw CannotRun("STATS has no " + name);
}

void store_entries(const std::string& socket, unsigned count) {
  auto client = connect_daemon(socket);
  const std::vector<std::uint8_t> image = testing::make_cubin(testing::CubinSpec{}, std::vector<std::uint8_t>(256, 7));
  for (unsigned i = 0; i < count; ++i) {
    const SampleKey sample = sample_key("stored source " + std::to_string(i));
    proto::PutRequest put;
    put.key = sample.key;
    put.producer = "bench_lookup_miss";
    put.image = proto::Bytes(image);
    put.content_fast = sample.content_fast;
    if (auto stored = client.put(put); !stored) throw CannotRun("PUT: " + stored.error().message);
  }
}

struct Cell {
  Pattern pattern = Pattern::fast_key;
  unsigned clients = 0;
  LoadResult load;
  double daemon_cpu_us_per_miss = 0;
  double misses_counted_per_miss = 0;
};

Cell measure(const BenchOptions& options, const std::string& socket, pid_t daemon_pid,
             const std::vector<SampleKey>& keys, Pattern pattern, unsigned client_count) {
  Cell cell;
  cell.pattern = pattern;
  cell.clients = client_count;
  std::vector<std::unique_ptr<LoadClient>> clients;
  for (unsigned i = 0; i < client_count; ++i) {
    clients.push_back(std::make_unique<MissClient>(connect_daemon(socket), keys, pattern,
                                                   static_cast<std::size_t>(i) * keys.size() / client_count));
  }
  auto observer = connect_daemon(socket);
  std::optional<ProcessUsage> start;
  std::optional<ProcessUsage> end;
  std::uint64_t misses_before = 0;
  std::uint64_t misses_after = 0;
  LoadSettings settings;
  settings.warm_up = std::chrono::duration<double>(options.warm_up);
  settings.measure = std::chrono::duration<double>(options.seconds);
  // STATS is read around the CPU readings, so its own cost is outside them.
  settings.at_window_start = [&] {
    misses_before = stat(observer, "misses");
    start = process_usage(daemon_pid);
  };
  settings.at_window_end = [&] {
    end = process_usage(daemon_pid);
    misses_after = stat(observer, "misses");
  };
  cell.load = run_load(settings, std::move(clients));
  // A request begun in the window but finished after it still counts in STATS: the counted figure
  // is per miss within a request or two.
  const auto misses = static_cast<double>(cell.load.requests);
  if (misses > 0) {
    if (start && end)
      cell.daemon_cpu_us_per_miss = static_cast<double>((end->cpu_time - start->cpu_time).count()) / misses;
    cell.misses_counted_per_miss = static_cast<double>(misses_after - misses_before) / misses;
  }
  return cell;
}

void print_header(std::ostream& out) {
  out << std::left << std::setw(20) << "pattern" << std::right << std::setw(8) << "clients" << std::setw(10)
      << "LOOKUPs" << std::setw(12) << "misses/s" << std::setw(12) << "LOOKUPs/s" << std::setw(10) << "mean us"
      << std::setw(10) << "p50 us" << std::setw(10) << "p99 us" << std::setw(14) << "daemon CPU us" << std::setw(10)
      << "counted"
      << "\n";
}

void print_row(std::ostream& out, const Cell& cell) {
  const double per_second = cell.load.requests_per_second();
  out << std::left << std::setw(20) << pattern_name(cell.pattern) << std::right << std::setw(8) << cell.clients
      << std::setw(10) << lookups_per_miss(cell.pattern) << std::fixed << std::setprecision(0) << std::setw(12)
      << per_second << std::setw(12) << per_second * lookups_per_miss(cell.pattern) << std::setprecision(1)
      << std::setw(10) << cell.load.latency.mean_us << std::setw(10) << cell.load.latency.p50_us << std::setw(10)
      << cell.load.latency.p99_us << std::setw(14) << cell.daemon_cpu_us_per_miss << std::setprecision(2)
      << std::setw(10) << cell.misses_counted_per_miss << "\n";
}

int run(const BenchOptions& options, const std::string& command_line) {
  testing::TempDir daemon_dir("jitcache-bench-miss");
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
  }
  std::string version;
  std::optional<pid_t> daemon_pid;
  {
    auto first = connect_daemon(socket);
    const auto hello = first.hello("bench_lookup_miss");
    version = hello ? hello->daemon_version : "unknown";
    daemon_pid = socket_peer_pid(first.connection().fd());
  }
  if (!daemon_pid) throw CannotRun("cannot tell the daemon's pid from its socket");
  store_entries(socket, options.entries);
  std::vector<SampleKey> keys;
  for (unsigned i = 0; i < options.miss_keys; ++i) keys.push_back(sample_key("missing source " + std::to_string(i)));

  const MachineInfo machine = read_machine_info();
  std::cout << "bench_lookup_miss: " << command_line << "\n"
            << "machine: " << machine.cpu_model << ", " << machine.usable_cpus << " of " << machine.online_cpus
            << " CPUs usable, " << machine.memory_mib << " MiB, " << machine.kernel << ", load average "
            << machine.load_average << "\n"
            << "daemon: " << version << (daemon ? " (started by the benchmark)" : " at " + socket) << "; "
            << options.entries << " entries stored; " << options.miss_keys << " missing keys\n"
            << "misses/s: loads that learnt \"not stored\"; LOOKUPs: round trips per miss; latency: of one miss "
               "(all its LOOKUPs); daemon CPU: per miss; counted: STATS misses per miss\n\n";
  print_header(std::cout);
  bool any_failure = false;
  for (const Pattern pattern : {Pattern::fast_key, Pattern::key, Pattern::fast_then_key}) {
    for (const unsigned clients : options.clients) {
      const Cell cell = measure(options, socket, *daemon_pid, keys, pattern, clients);
      print_row(std::cout, cell);
      if (cell.load.failures != 0) {
        std::cerr << "failed: " << cell.load.first_failure << "\n";
        any_failure = true;
      }
    }
  }
  if (daemon) {
    if (const int status = daemon->stop(); status != 0) {
      std::cerr << "jitcached exited with status " << status << ":\n" << log_tail(daemon->log_path()) << "\n";
      return 1;
    }
  }
  return any_failure ? 1 : 0;
}

}  // namespace
}  // namespace jitcache::bench

int main(int argc, char** argv) {
  using namespace jitcache::bench;
  BenchOptions options;
  CLI::App app{"LOOKUP misses per second of jitcached, by fast key, by key, and by both (docs/benchmarks.md)"};
  app.add_option("--seconds", options.seconds, "Measurement window per cell, in seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warm-up", options.warm_up, "Unmeasured requests before each window, in seconds")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--clients", options.clients, "Client counts (threads, one connection each), comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  app.add_option("--entries", options.entries, "Entries stored before the misses are measured")
      ->check(CLI::Range(0u, 1000000u))
      ->capture_default_str();
  app.add_option("--miss-keys", options.miss_keys, "Distinct missing keys")
      ->check(CLI::Range(1u, 1000000u))
      ->capture_default_str();
  app.add_option("--socket", options.socket, "Use the jitcached already listening here instead of starting one");
  CLI11_PARSE(app, argc, argv);
  ::signal(SIGPIPE, SIG_IGN);
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i == 0 ? "" : " ") + std::string(argv[i]);
  try {
    return run(options, command_line);
  } catch (const std::exception& error) {
    std::cerr << "bench_lookup_miss: " << error.what() << "\n";
    return 2;
  }
}
