// bench_client_load: what a program waits for when it loads a corpus module through libjitcache,
// next to what it would wait for without it. For each module and each path, every sample is one
// fresh process (this program again, in --child mode: client_load_child.hpp) that times the load
// call after its context exists:
//
//   hit  jitcache_module_load_data with the entry in the daemon: from its published copy when the
//        image is small enough to be published (the report counts which path each hit took), else
//        LOOKUP; checks, cuModuleLoadData. Also the same hit with JITCACHE_PUBLISHED=0 (always LOOKUP)
//   (a)  cuModuleLoadData of the finished cubin already in memory: the floor for any cache
//   (b)  cuModuleLoadData(PTX) with the driver's compute cache warm (CUDA_CACHE_PATH in a temp dir,
//        filled by one warming process first)
//   (c)  cuModuleLoadData(PTX) cold (CUDA_CACHE_DISABLE=1): the driver's JIT
//   (d)  jitcache_module_load_data with no daemon at the socket: the uncached fallback, with the
//        driver cache warm as in (b), its dead-daemon overhead (ns_key + ns_lookup) shown apart
//
// The priming load of each module is a miss; its line shows what the miss cost, how many LOOKUPs
// it sent (jitcache_counters.lookups: one, where the daemon has fast keys) and its ns_lookup.
//
// A program that prints figures (docs/benchmarks.md), not a timed test. It needs a GPU: without
// one it prints "SKIPPED: <reason>" and exits 77. Exit 1 when a sample failed or had the wrong
// outcome, 2 when it cannot run at all.
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <client/src/transport/daemon_client.hpp>

#include <tests/bench/client_load_child.hpp>
#include <tests/bench/client_load_report.hpp>
#include <tests/bench/log_tail.hpp>
#include <tests/bench/machine_info.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/ptx_entries.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::bench {
namespace {

using testing::EnvChange;

struct BenchOptions {
  std::string corpus;
  std::string daemon;
  unsigned repeat = 0;       // 0: 7 for small and mid, 5 for cub
  unsigned cold_repeat = 0;  // 0: 3 for cub, else as repeat
  std::vector<std::string> modules{"small_kernel.ptx", "mid_kernels.ptx", "cub_kernels.ptx"};
};

// Rationale: the cold JIT of cub_kernels.ptx takes 5-7 s on an H200, and a busy host may take
// several times that; a child past this is hung, not slow.
constexpr auto k_child_timeout = std::chrono::seconds(300);

struct CannotRun : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct NoGpu : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return (value != nullptr && *value != '\0') ? value : fallback;
}

unsigned default_repeat(const std::string& module) { return module == "cub_kernels.ptx" ? 5 : 7; }

// How a child sees the driver's compute cache: off, or on in a directory of the benchmark's own
// (never the user's ~/.nv/ComputeCache).
struct DriverCache {
  bool enabled = false;
  std::string path;
};

std::vector<EnvChange> child_env(const std::string& socket, const DriverCache& cache) {
  return {{"JITCACHE_SOCKET", socket},        {"JITCACHE_QUIET", "1"},
          {"JITCACHE_DISABLE", std::nullopt}, {"JITCACHE_CONFIG", std::nullopt},
          {"CUDA_CACHE_PATH", cache.path},    {"CUDA_CACHE_DISABLE", cache.enabled ? "0" : "1"}};
}

// The fields of a child's RESULT line.
using Fields = std::map<std::string, std::string>;

std::optional<Fields> result_fields(const std::string& output) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("RESULT ", 0) != 0) continue;
    Fields fields;
    std::istringstream words(line.substr(7));
    for (std::string word; words >> word;) {
      const auto equals = word.find('=');
      if (equals != std::string::npos) fields[word.substr(0, equals)] = word.substr(equals + 1);
    }
    return fields;
  }
  return std::nullopt;
}

std::uint64_t number(const Fields& fields, const std::string& name) {
  const auto it = fields.find(name);
  if (it == fields.end()) throw std::runtime_error("the child's RESULT has no " + name);
  return std::stoull(it->second);
}

std::string field(const Fields& fields, const std::string& name) {
  const auto it = fields.find(name);
  return it == fields.end() ? std::string() : it->second;
}

std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  return text;
}

// One sample: a child process in `mode`. Its RESULT fields, or nullopt with `failure` set.
std::optional<Fields> run_sample(ChildMode mode, const std::string& module_path, const std::string& cubin_path,
                                 const std::vector<EnvChange>& env, std::string& failure) {
  std::vector<std::string> argv{testing::self_executable(), "--child", child_mode_name(mode), "--module", module_path};
  if (!cubin_path.empty()) {
    argv.push_back("--cubin");
    argv.push_back(cubin_path);
  }
  const auto child = testing::run_child(argv, env, k_child_timeout);
  if (child.status == k_skip_status) throw NoGpu(one_line(child.output));
  auto fields = result_fields(child.output);
  if (child.status != 0 || !fields) {
    failure = std::string(child_mode_name(mode)) + " child exited with " + std::to_string(child.status) + ": " +
              one_line(child.output);
    return std::nullopt;
  }
  return fields;
}

// The image the daemon stores under `key_id`, written to `path`; its size.
std::size_t fetch_cubin(const std::string& socket, const std::string& key_id, const std::string& path) {
  client::transport::ConnectOptions options;
  options.socket_path = socket;
  options.io_timeout = std::chrono::seconds(30);
  auto client = client::transport::DaemonClient::connect(options);
  if (!client) throw CannotRun("cannot connect to jitcached: " + client.error().message);
  if (auto hello = client->hello("bench_client_load"); !hello) throw CannotRun("HELLO: " + hello.error().message);
  auto entry = client->lookup_by_id(key_id);
  if (!entry || !entry->has_value()) {
    throw CannotRun("the entry " + key_id + " the priming load stored is not in the daemon" +
                    (entry ? std::string() : ": " + entry.error().message));
  }
  const auto& image = (*entry)->image;
  testing::write_file(path, std::string(image.begin(), image.end()));
  return image.size();
}

class ModuleBench {
 public:
  ModuleBench(const BenchOptions& options, const std::string& name, const std::string& socket)
      : m_options(options), m_socket(socket), m_work("jitcache-bench-load") {
    m_figures.name = name;
    m_module_path = options.corpus + "/" + name;
    try {
      const std::string ptx = testing::read_file(m_module_path);
      m_figures.ptx_bytes = ptx.size();
      m_figures.kernels = testing::ptx_entry_names(ptx).size();
    } catch (const std::exception& error) {
      throw CannotRun(error.what());
    }
    m_cubin_path = m_work.file("cached.cubin");
    m_warm = {true, m_work.file("driver-cache-warm")};
    m_cold = {false, m_work.file("driver-cache-off")};
    m_dead_socket = m_work.file("no-daemon-here.sock");
  }

  ModuleFigures run() {
    const unsigned repeat = m_options.repeat != 0 ? m_options.repeat : default_repeat(m_figures.name);
    const unsigned cold_repeat = m_options.cold_repeat != 0            ? m_options.cold_repeat
                                 : m_figures.name == "cub_kernels.ptx" ? std::min(repeat, 3u)
                                                                       : repeat;
    progress("priming the cache");
    prime();
    progress("warming the driver's compute cache");
    warm_driver_cache();
    for (unsigned i = 0; i < repeat; ++i) {
      progress("round " + std::to_string(i + 1) + " of " + std::to_string(repeat) + ": hit, socket hit, (a), (b), (d)");
      sample_hit();
      sample_socket_hit();
      sample(ChildMode::cubin, m_cubin_path, child_env(m_socket, m_cold), m_figures.cubin);
      sample(ChildMode::driver, "", child_env(m_socket, m_warm), m_figures.driver_warm);
      sample_fallback();
    }
    for (unsigned i = 0; i < cold_repeat; ++i) {
      progress("cold JIT " + std::to_string(i + 1) + " of " + std::to_string(cold_repeat));
      sample(ChildMode::driver, "", child_env(m_socket, m_cold), m_figures.driver_cold);
    }
    return std::move(m_figures);
  }

 private:
  void progress(const std::string& step) { std::cerr << "[" << m_figures.name << "] " << step << std::endl; }

  std::optional<Fields> child(ChildMode mode, const std::string& cubin, const std::vector<EnvChange>& env) {
    std::string failure;
    auto fields = run_sample(mode, m_module_path, cubin, env, failure);
    if (!fields) m_figures.failures.push_back(failure);
    return fields;
  }

  void sample(ChildMode mode, const std::string& cubin, const std::vector<EnvChange>& env, Samples& into) {
    if (auto fields = child(mode, cubin, env)) into.push_back(number(*fields, "ns"));
  }

  // A jitcache child whose outcome must be `expected`; its fields, or nullopt (recorded as failed).
  std::optional<Fields> jitcache_child(const std::vector<EnvChange>& env, const std::vector<std::string>& expected) {
    auto fields = child(ChildMode::jitcache, "", env);
    if (!fields) return std::nullopt;
    const std::string outcome = field(*fields, "outcome");
    for (const auto& good : expected) {
      if (outcome == good) return fields;
    }
    m_figures.failures.push_back("a jitcache load had the outcome " + outcome + ", expected " + expected.front());
    return std::nullopt;
  }

  // A miss that compiles and stores the module; the stored cubin becomes (a)'s image.
  void prime() {
    auto fields = jitcache_child(child_env(m_socket, m_cold), {"compiled_locally", "compiled_by_daemon"});
    if (!fields) throw CannotRun("the priming load failed: " + m_figures.failures.back());
    m_figures.miss_outcome = field(*fields, "outcome");
    m_figures.miss_ns = number(*fields, "ns");
    m_figures.miss_lookups = number(*fields, "lookups");
    m_figures.miss_ns_lookup = number(*fields, "ns_lookup");
    m_figures.cubin_bytes = fetch_cubin(m_socket, field(*fields, "key"), m_cubin_path);
  }

  // One process of each driver entry point the warm paths use, so that (b) and (d) find it cached.
  void warm_driver_cache() {
    std::string failure;
    if (!run_sample(ChildMode::driver, m_module_path, "", child_env(m_socket, m_warm), failure) ||
        !run_sample(ChildMode::jitcache, m_module_path, "", child_env(m_dead_socket, m_warm), failure)) {
      throw CannotRun("warming the driver's compute cache failed: " + failure);
    }
  }

  void sample_hit() {
    auto fields = jitcache_child(child_env(m_socket, m_cold), {"hit"});
    if (!fields) return;
    m_figures.hit.push_back(number(*fields, "ns"));
    if (field(*fields, "hit_path") == "published") ++m_figures.hits_published;
    m_figures.published_rejects += number(*fields, "published_rejects");
    m_figures.hit_key.push_back(number(*fields, "ns_key"));
    m_figures.hit_lookup.push_back(number(*fields, "ns_lookup"));
    m_figures.hit_load.push_back(number(*fields, "ns_load"));
    m_figures.hit_setup.push_back(number(*fields, "ns_setup"));
    m_figures.hit_classify.push_back(number(*fields, "ns_classify"));
    m_figures.hit_total.push_back(number(*fields, "ns_total"));
  }

  // The same hit with the published copy turned off, so the figures show what it saves.
  void sample_socket_hit() {
    auto env = child_env(m_socket, m_cold);
    env.push_back(EnvChange{"JITCACHE_PUBLISHED", "0"});
    if (auto fields = jitcache_child(env, {"hit"})) m_figures.hit_socket.push_back(number(*fields, "ns"));
  }

  void sample_fallback() {
    auto fields = jitcache_child(child_env(m_dead_socket, m_warm), {"uncached_fallback"});
    if (!fields) return;
    m_figures.fallback.push_back(number(*fields, "ns"));
    m_figures.fallback_overhead.push_back(number(*fields, "ns_key") + number(*fields, "ns_lookup"));
  }

  const BenchOptions& m_options;
  std::string m_socket;
  testing::TempDir m_work;
  ModuleFigures m_figures;
  std::string m_module_path;
  std::string m_cubin_path;
  std::string m_dead_socket;
  DriverCache m_warm;
  DriverCache m_cold;
};

std::string joined_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i == 0 ? "" : " ") + std::string(argv[i]);
  return line;
}

void print_header(std::ostream& out, const std::string& gpu, const BenchOptions& options, const std::string& command) {
  const MachineInfo machine = read_machine_info();
  out << "machine:  " << machine.cpu_model << ", " << machine.online_cpus << " CPUs online (" << machine.usable_cpus
      << " usable), " << machine.memory_mib << " MiB, " << machine.kernel << ", load average " << machine.load_average
      << " at start\n"
      << gpu << "\n"
      << "jitcached: " << options.daemon << " (started by the benchmark, temp state dir and socket)\n"
      << "corpus:   " << options.corpus << "\n"
      << "method:   one fresh process per sample; context created before the clock starts; timed: the load call; "
         "the module is then proven usable (its first kernel fetched, untimed). CUDA_MODULE_LOADING="
      << env_or("CUDA_MODULE_LOADING", "(unset: the driver's default)") << "\n"
      << "command:  " << command << "\n\n";
}

int run(BenchOptions options, const std::string& command) {
  // DaemonProcess starts daemon_executable(), which honours $JITCACHE_DAEMON_PATH.
  ::setenv("JITCACHE_DAEMON_PATH", options.daemon.c_str(), 1);

  const auto probe = testing::run_child({testing::self_executable(), "--child", "probe"}, {}, k_child_timeout);
  if (probe.status == k_skip_status) throw NoGpu(one_line(probe.output));
  if (probe.status != 0) throw CannotRun("the GPU probe failed: " + one_line(probe.output));
  std::string gpu = probe.output;
  while (!gpu.empty() && gpu.back() == '\n') gpu.pop_back();

  testing::TempDir daemon_dir("jitcache-bench-load-daemon");
  testing::DaemonProcess daemon(daemon_dir);
  try {
    daemon.start();
  } catch (const std::exception& error) {
    throw CannotRun(std::string(error.what()) + ":\n" + log_tail(daemon.log_path()));
  }

  print_header(std::cout, gpu, options, command);
  std::vector<TargetCheck> checks;
  bool any_failure = false;
  for (const auto& name : options.modules) {
    ModuleBench bench(options, name, daemon.socket_path());
    const ModuleFigures figures = bench.run();
    print_module(std::cout, figures);
    any_failure = any_failure || !figures.failures.empty();
    for (auto& check : check_targets(figures)) checks.push_back(std::move(check));
  }
  print_targets(std::cout, checks);

  if (const int status = daemon.stop(); status != 0) {
    std::cerr << "jitcached exited with status " << status << " after SIGTERM:\n"
              << log_tail(daemon.log_path()) << "\n";
    return 1;
  }
  if (any_failure) {
    std::cerr << "some samples failed (listed under their module); their paths' figures are incomplete\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace jitcache::bench

int main(int argc, char** argv) {
  using namespace jitcache::bench;
  BenchOptions options;
  options.corpus = env_or("JITCACHE_CORPUS_DIR", JITCACHE_CORPUS_DIR);
  options.daemon = jitcache::testing::daemon_executable();
  std::string child_mode;
  ChildRequest child;

  CLI::App app{
      "Time from the load call to a usable CUmodule through libjitcache, against the driver's own paths "
      "(docs/benchmarks.md)"};
  app.add_option("--corpus", options.corpus, "Directory of the PTX corpus ($JITCACHE_CORPUS_DIR)")
      ->capture_default_str();
  app.add_option("--daemon", options.daemon, "The jitcached to start ($JITCACHE_DAEMON_PATH)")->capture_default_str();
  app.add_option("--repeat", options.repeat, "Samples per path (default 7 for small and mid, 5 for cub)")
      ->check(CLI::Range(1u, 1000u));
  app.add_option("--cold-repeat", options.cold_repeat, "Samples of the cold JIT (default: 3 for cub, else --repeat)")
      ->check(CLI::Range(1u, 1000u));
  app.add_option("--modules", options.modules, "Corpus modules, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  // The per-sample child (client_load_child.hpp); not for people.
  app.add_option("--child", child_mode)->group("");
  app.add_option("--module", child.module_path)->group("");
  app.add_option("--cubin", child.cubin_path)->group("");
  CLI11_PARSE(app, argc, argv);

  if (!child_mode.empty()) {
    const auto mode = parse_child_mode(child_mode);
    if (!mode) {
      std::cout << "ERROR unknown child mode " << child_mode << std::endl;
      return 2;
    }
    child.mode = *mode;
    return run_client_load_child(child);
  }

  try {
    return run(options, joined_command_line(argc, argv));
  } catch (const NoGpu& skipped) {
    std::cout << skipped.what() << std::endl;
    return k_skip_status;
  } catch (const std::exception& error) {
    std::cerr << "bench_client_load: " << error.what() << "\n";
    return 2;
  }
}
