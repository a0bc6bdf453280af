// bench_cold_start: N processes that cold-start on one module at the same moment.
// With jitcached, the first of them asks the daemon to compile and the others join that compile
// (single flight), so the host compiles once; without it, every process compiles for itself.
//
//   jitcache       N processes, jitcache_module_load_data(PTX), a fresh daemon with an empty store
//   nvJitLink      N jitcache-compile workers at once on the same job (what N tools linking
//                  nvJitLink would do), no GPU needed
//   driver JIT     N processes, cuModuleLoadData(PTX), CUDA_CACHE_DISABLE=1
//   driver cache   N processes, cuModuleLoadData(PTX), one empty CUDA_CACHE_PATH shared by all
//
// Each wave's wall time runs from a common start line (every process has its context) to the end of
// the last load (cold_start_wave.hpp). The reference "one compile" is a single jitcache-compile run
// of the same job, timed alone before the waves. Targets (reported, never asserted): the jitcache
// wave compiles exactly once, and its wall time is at most 1.2x one compile. Needs a GPU for every
// wave but nvJitLink; without one it prints "SKIPPED: <reason>" and exits 77.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>
#include <vector>

#include <client/src/transport/daemon_client.hpp>
#include <daemon/compile/compile_runner.hpp>
#include <daemon/compile/prepare_job.hpp>
#include <daemon/compile/worker_path.hpp>
#include <proto/jit_options.hpp>

#include <tests/bench/client_load_child.hpp>
#include <tests/bench/cold_start_wave.hpp>
#include <tests/bench/machine_info.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::bench {
namespace {

using Clock = std::chrono::steady_clock;
using testing::EnvChange;

struct Options {
  std::string module;
  std::string daemon;
  std::string worker;
  std::string arch = "sm_90a";
  unsigned processes = 32;
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string outcomes_text(const WaveResult& wave) {
  std::string text;
  for (const auto& [outcome, count] : wave.outcomes)
    text += (text.empty() ? "" : ", ") + std::to_string(count) + " " + outcome;
  return text;
}

void print_wave(const std::string& name, const WaveResult& wave, double one_compile, const std::string& compiles) {
  const double slowest =
      wave.load_seconds.empty() ? 0 : *std::max_element(wave.load_seconds.begin(), wave.load_seconds.end());
  std::printf("  %-14s %4u processes  wall %7.2f s  (%5.2fx one compile)  slowest load %7.2f s  compiles %s%s%s\n",
              name.c_str(), wave.processes, wave.wall_seconds, one_compile > 0 ? wave.wall_seconds / one_compile : 0.0,
              slowest, compiles.c_str(), wave.outcomes.empty() ? "" : "  outcomes: ", outcomes_text(wave).c_str());
  for (const auto& failure : wave.failures) std::printf("    FAILED %s\n", failure.c_str());
}

std::uint64_t stat(client::transport::DaemonClient& client, const std::string& name) {
  auto stats = client.stats();
  if (!stats) return 0;
  for (const auto& [n, v] : stats->values) {
    if (n == name) return v;
  }
  return 0;
}

// N workers at once on one job; the wall time from their common start to the last one's end.
double nvjitlink_wave(daemon::compile::CompileRunner& runner, const daemon::compile::CompileJob& job, unsigned n,
                      unsigned& failures) {
  std::barrier line(static_cast<std::ptrdiff_t>(n) + 1);
  std::vector<std::thread> threads;
  std::atomic<unsigned> failed{0};
  for (unsigned i = 0; i < n; ++i) {
    threads.emplace_back([&] {
      line.arrive_and_wait();
      if (runner.run(job).kind != daemon::compile::OutcomeKind::compiled) ++failed;
    });
  }
  line.arrive_and_wait();
  const auto start = Clock::now();
  for (auto& thread : threads) thread.join();
  failures = failed;
  return seconds_since(start);
}

int run(const Options& options) {
  const auto probe =
      testing::run_child({testing::self_executable(), "--child", "probe"}, {}, std::chrono::seconds(120));
  if (probe.status == k_skip_status) {
    std::cout << probe.output;
    return k_skip_status;
  }
  const std::string ptx = testing::read_file(options.module);
  const std::vector<std::uint8_t> ptx_bytes(ptx.begin(), ptx.end());

  daemon::compile::CompileRunner runner(options.worker, daemon::compile::CompileLimits{std::chrono::seconds(600), 0,
                                                                                       std::chrono::seconds(600)});
  auto toolkit = runner.probe_toolkit();
  if (!toolkit) {
    std::cerr << "bench_cold_start: the compile worker " << options.worker
              << " does not run: " << toolkit.error().message << "\n";
    return 1;
  }
  daemon::compile::CompileInput input{options.arch, 13000, proto::default_option_text(), ptx_bytes};
  auto prepared = daemon::compile::prepare_job(input, *toolkit);
  if (!prepared || !std::holds_alternative<daemon::compile::CompileJob>(*prepared)) {
    std::cerr << "bench_cold_start: nvJitLink " << daemon::compile::to_string(*toolkit) << " will not compile "
              << options.module << " for " << options.arch << "\n";
    return 1;
  }
  const auto& job = std::get<daemon::compile::CompileJob>(*prepared);

  const MachineInfo machine = read_machine_info();
  std::cout << "machine:  " << machine.cpu_model << ", " << machine.online_cpus << " CPUs, " << machine.memory_mib
            << " MiB, " << machine.kernel << "\n"
            << probe.output << "module:   " << options.module << " (" << ptx.size() << " bytes)\n"
            << "nvJitLink " << daemon::compile::to_string(*toolkit) << " (" << options.worker << "), arch "
            << options.arch << "\n\n";

  const auto one_start = Clock::now();
  const auto one = runner.run(job);
  const double one_compile = seconds_since(one_start);
  if (one.kind != daemon::compile::OutcomeKind::compiled) {
    std::cerr << "bench_cold_start: the reference compile failed: " << one.message << "\n";
    return 1;
  }
  std::printf("one compile (jitcache-compile, alone): %.2f s (nvJitLink itself %.2f s)\n\n", one_compile,
              static_cast<double>(one.compile_time_us) / 1e6);

  bool ok = true;
  std::uint64_t jitcache_compiles = 0;
  double jitcache_wall = 0;
  {
    testing::TempDir state("jitcache-bench-cold-start-daemon");
    testing::DaemonProcess daemon(state);
    daemon.start();
    const std::vector<EnvChange> env{{"JITCACHE_SOCKET", daemon.socket_path()},
                                     {"CUDA_CACHE_DISABLE", "1"},
                                     {"JITCACHE_DISABLE", std::nullopt}};
    const WaveResult wave = run_wave(ChildMode::jitcache, options.module, env, options.processes);
    auto client = daemon.client();
    jitcache_compiles = stat(client, "compiles");
    jitcache_wall = wave.wall_seconds;
    print_wave("jitcache", wave, one_compile,
               std::to_string(jitcache_compiles) + " by the daemon (" +
                   std::to_string(stat(client, "single_flight_joins")) + " joined), " +
                   std::to_string(wave.outcomes.count("compiled_locally") ? wave.outcomes.at("compiled_locally") : 0) +
                   " by clients");
    ok = ok && wave.failures.empty();
  }
  {
    unsigned failures = 0;
    const double wall = nvjitlink_wave(runner, job, options.processes, failures);
    WaveResult wave;
    wave.processes = options.processes;
    wave.wall_seconds = wall;
    print_wave("nvJitLink", wave, one_compile, std::to_string(options.processes - failures));
    ok = ok && failures == 0;
  }
  {
    const WaveResult wave =
        run_wave(ChildMode::driver, options.module, {{"CUDA_CACHE_DISABLE", "1"}}, options.processes);
    print_wave("driver JIT", wave, one_compile, std::to_string(options.processes) + " (one per process)");
    ok = ok && wave.failures.empty();
  }
  {
    testing::TempDir cache("jitcache-bench-cold-start-cuda-cache");
    const std::vector<EnvChange> env{{"CUDA_CACHE_DISABLE", "0"},
                                     {"CUDA_CACHE_PATH", cache.path()},
                                     {"CUDA_CACHE_MAXSIZE", "4294967296"}};
    const WaveResult wave = run_wave(ChildMode::driver, options.module, env, options.processes);
    print_wave("driver cache", wave, one_compile, "(not reported by the driver)");
    ok = ok && wave.failures.empty();
  }

  std::printf("\nTargets (reported, not asserted):\n");
  std::printf("  jitcache wave compiles exactly once                 %llu compile(s)   %s\n",
              static_cast<unsigned long long>(jitcache_compiles), jitcache_compiles == 1 ? "met" : "MISSED");
  std::printf("  jitcache wave wall time <= 1.2x one compile         %.2f s vs %.2f s (%.2fx)   %s\n", jitcache_wall,
              one_compile, one_compile > 0 ? jitcache_wall / one_compile : 0.0,
              jitcache_wall <= 1.2 * one_compile ? "met" : "MISSED");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace jitcache::bench

int main(int argc, char** argv) {
  using namespace jitcache::bench;
  Options options;
  const char* corpus = std::getenv("JITCACHE_CORPUS_DIR");
  options.module = std::string(corpus != nullptr ? corpus : JITCACHE_CORPUS_DIR) + "/cub_kernels.ptx";
  options.daemon = jitcache::testing::daemon_executable();
  std::string child_mode;
  ChildRequest child;

  CLI::App app{
      "N processes cold-starting on one module at once: jitcached's single compile against every process "
      "compiling (docs/benchmarks.md)"};
  app.add_option("--module", options.module, "The PTX module")->capture_default_str();
  app.add_option("--processes", options.processes, "Processes per wave")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  app.add_option("--daemon", options.daemon, "The jitcached to start ($JITCACHE_DAEMON_PATH)")->capture_default_str();
  app.add_option("--worker", options.worker, "The jitcache-compile to time (default: beside the daemon)");
  app.add_option("--arch", options.arch, "The arch the nvJitLink wave compiles for")->capture_default_str();
  // The per-process child (client_load_child.hpp); not for people.
  app.add_option("--child", child_mode)->group("");
  app.add_option("--ready-file", child.ready_file)->group("");
  app.add_option("--start-file", child.start_file)->group("");
  CLI11_PARSE(app, argc, argv);

  if (!child_mode.empty()) {
    const auto mode = parse_child_mode(child_mode);
    if (!mode) {
      std::cout << "ERROR unknown child mode " << child_mode << std::endl;
      return 1;
    }
    child.mode = *mode;
    child.module_path = options.module;
    return run_client_load_child(child);
  }
  if (options.worker.empty()) {
    options.worker = (std::filesystem::path(options.daemon).parent_path() / "jitcache-compile").string();
  }
  // DaemonProcess starts daemon_executable(), which honours $JITCACHE_DAEMON_PATH.
  ::setenv("JITCACHE_DAEMON_PATH", options.daemon.c_str(), 1);
  try {
    return run(options);
  } catch (const std::exception& error) {
    std::cerr << "bench_cold_start: " << error.what() << "\n";
    return 1;
  }
}
