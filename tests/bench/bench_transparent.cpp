// bench_transparent: what transparent mode (docs/transparent.md) costs and saves, in processes of
// their own. Figures are printed, never asserted (docs/benchmarks.md "Transparent mode").
//
//   program      wall time of an unmodified program (--program, e.g. the PTX-only ptx_only_scale):
//                cold (no cache at all: CUDA_CACHE_DISABLE=1), with the driver's warm cache (a
//                fresh CUDA_CACHE_PATH warmed by one run), and under libjitcache-preload.so on a hit
//                (the driver's cache off, a daemon warmed by one run); median of --repeat runs
//   passthrough  the per-call cost of the pass-through path: a cubin through cuLibraryLoadData
//                (+ cuLibraryUnload, not timed) --calls times in a child, with and without the
//                preload library; target: under 5 us more per call
//   torch        `import torch` and one op (--python), with and without the preload library,
//                alternating; median and fastest of --repeat each; target: within 2 % or 20 ms
//   cupy         a CuPy program in CuPy's default mode, NVRTC compiling to cubins (--python, and
//                --cupy-script, e.g. tests/gpu/python/cupy_nvrtc_default.py): with CuPy's cache
//                empty (a fresh CUPY_CACHE_DIR each run), with CuPy's cache warm, and under the
//                preload library on a hit with CuPy's disk cache empty (the script's --fresh-cache)
//                and with it in memory (CUPY_CACHE_IN_MEMORY=1), and with CuPy's cache warm (what
//                the preload costs a start that compiles nothing), each after one run warmed the
//                daemon; --repeat rounds, the four alternating, median and fastest of each;
//                target: the hit within 15 % of the warm CuPy cache (docs/transparent.md "NVRTC
//                compiles")
//
// Needs a driver: the GPU's, or the fake of tests/fakes through $JITCACHE_CUDA_DRIVER and a
// LD_LIBRARY_PATH that finds its libcuda.so.1 (the CI smoke run, passthrough only). A section whose
// input is missing prints "SKIPPED: <why>".
#include <cuda.h>
#include <dlfcn.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <tests/bench/machine_info.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::bench {
namespace {

using Clock = std::chrono::steady_clock;
using testing::ChildResult;
using testing::EnvChange;
using testing::run_child;

constexpr const char* k_child_flag = "--child-passthrough";

struct Options {
  std::string program;
  std::string python;
  std::string preload = JITCACHE_PRELOAD_LIBRARY_PATH;
  std::string cubin;  // for passthrough; empty: a generated sm_90 cubin (the fake driver loads it)
  std::string cupy_script;
  unsigned repeat = 5;
  unsigned calls = 2000;
  std::vector<std::string> sections = {"program", "passthrough", "torch"};
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0.0 : values[values.size() / 2];
}

// Seconds of wall time for one run of `argv`, or nullopt when it failed.
std::optional<double> timed_run(const std::vector<std::string>& argv, const std::vector<EnvChange>& env) {
  const auto start = Clock::now();
  const ChildResult result = run_child(argv, env, std::chrono::seconds(600));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (result.status != 0) {
    std::cerr << "bench_transparent: " << argv[0] << " exited " << result.status << ": " << result.output << "\n";
    return std::nullopt;
  }
  return seconds;
}

std::optional<double> median_run(const std::vector<std::string>& argv, const std::vector<EnvChange>& env,
                                 unsigned repeat) {
  std::vector<double> runs;
  for (unsigned i = 0; i < repeat; ++i) {
    auto seconds = timed_run(argv, env);
    if (!seconds) return std::nullopt;
    runs.push_back(*seconds);
  }
  return median(runs);
}

void print_ms(const std::string& what, std::optional<double> seconds) {
  if (seconds) {
    std::printf("  %-44s %10.1f ms\n", what.c_str(), *seconds * 1000.0);
  } else {
    std::printf("  %-44s %10s\n", what.c_str(), "failed");
  }
}

void bench_program(const Options& options) {
  std::cout << "program: " << options.program << " (median of " << options.repeat << ")\n";
  if (options.program.empty()) {
    std::cout << "  SKIPPED: no --program\n";
    return;
  }
  testing::TempDir dir("jitcache-bench-transparent");
  const std::vector<std::string> argv = {options.program};
  print_ms("cold (CUDA_CACHE_DISABLE=1)",
           median_run(argv, {{"CUDA_CACHE_DISABLE", std::string("1")}, {"LD_PRELOAD", std::nullopt}}, options.repeat));
  const std::vector<EnvChange> driver_cache = {{"CUDA_CACHE_DISABLE", std::string("0")},
                                               {"CUDA_CACHE_PATH", dir.file("driver-cache")},
                                               {"LD_PRELOAD", std::nullopt}};
  (void)timed_run(argv, driver_cache);
  print_ms("driver's warm cache", median_run(argv, driver_cache, options.repeat));

  testing::DaemonProcess daemon(dir);
  daemon.start();
  const std::vector<EnvChange> preloaded = {{"CUDA_CACHE_DISABLE", std::string("1")},
                                            {"LD_PRELOAD", options.preload},
                                            {"JITCACHE_SOCKET", daemon.socket_path()},
                                            {"JITCACHE_QUIET", std::string("1")}};
  (void)timed_run(argv, preloaded);
  print_ms("jitcache run, a hit (driver's cache off)", median_run(argv, preloaded, options.repeat));
}

// In the child: K loads of the cubin through cuLibraryLoadData as the program's own call (the
// preload library, when present, interposes it); prints the mean nanoseconds per load.
int child_passthrough(const std::string& cubin_path, unsigned calls) {
  std::ifstream in(cubin_path, std::ios::binary);
  const std::vector<char> cubin((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (cubin.empty()) return 3;
  void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW);
  if (cuda == nullptr) {
    std::printf("SKIPPED: no libcuda.so.1 (%s)\n", ::dlerror());
    return 77;
  }
  auto init = reinterpret_cast<CUresult (*)(unsigned)>(::dlsym(cuda, "cuInit"));
  auto load = reinterpret_cast<decltype(&::cuLibraryLoadData)>(::dlsym(cuda, "cuLibraryLoadData"));
  auto unload = reinterpret_cast<decltype(&::cuLibraryUnload)>(::dlsym(cuda, "cuLibraryUnload"));
  if (init == nullptr || load == nullptr || unload == nullptr || init(0) != CUDA_SUCCESS) {
    std::printf("SKIPPED: the driver has no cuLibraryLoadData or cuInit failed\n");
    return 77;
  }
  std::chrono::nanoseconds total{0};
  for (unsigned i = 0; i < calls; ++i) {
    CUlibrary library = nullptr;
    const auto start = Clock::now();
    const CUresult result = load(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    total += Clock::now() - start;
    if (result != CUDA_SUCCESS) {
      std::printf("cuLibraryLoadData returned %d\n", static_cast<int>(result));
      return 4;
    }
    unload(library);
  }
  std::printf("%.0f\n", static_cast<double>(total.count()) / calls);
  return 0;
}

void bench_passthrough(const Options& options, const std::string& self) {
  std::cout << "passthrough: a cubin through cuLibraryLoadData, " << options.calls << " calls\n";
  testing::TempDir dir("jitcache-bench-transparent");
  std::string cubin = options.cubin;
  if (cubin.empty()) {
    cubin = dir.file("sample.cubin");
    const auto bytes = testing::make_cubin({}, 1, 4096);
    std::ofstream(cubin, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  auto per_call = [&](bool preload) -> std::optional<double> {
    const ChildResult result = run_child({self, k_child_flag, cubin, std::to_string(options.calls)},
                                         {{"LD_PRELOAD", preload ? std::optional(options.preload) : std::nullopt},
                                          {"JITCACHE_SOCKET", dir.file("no-daemon.sock")},
                                          {"JITCACHE_QUIET", std::string("1")}},
                                         std::chrono::seconds(300));
    if (result.status == 77) {
      std::cout << "  " << result.output;
      return std::nullopt;
    }
    if (result.status != 0) {
      std::cout << "  child failed (" << result.status << "): " << result.output;
      return std::nullopt;
    }
    return std::stod(result.output);
  };
  const auto plain = per_call(false);
  const auto preloaded = per_call(true);
  if (!plain || !preloaded) return;
  std::printf("  %-44s %10.2f us\n", "without the preload library", *plain / 1000.0);
  std::printf("  %-44s %10.2f us\n", "with it (classified, passed through)", *preloaded / 1000.0);
  std::printf("  %-44s %10.2f us   (target: < 5 us)\n", "cost per call", (*preloaded - *plain) / 1000.0);
}

void bench_torch(const Options& options) {
  std::cout << "torch: import torch + torch.ones(1000, device='cuda').sum(), " << options.repeat
            << " runs each, with and without the preload library alternating\n";
  if (options.python.empty()) {
    std::cout << "  SKIPPED: no --python\n";
    return;
  }
  testing::TempDir dir("jitcache-bench-transparent");
  testing::DaemonProcess daemon(dir);
  daemon.start();
  const std::vector<std::string> argv = {options.python, "-c",
                                         "import torch; torch.ones(1000, device='cuda').sum().item()"};
  const std::vector<EnvChange> plain_env = {{"LD_PRELOAD", std::nullopt}};
  const std::vector<EnvChange> preloaded = {{"LD_PRELOAD", options.preload},
                                            {"JITCACHE_SOCKET", daemon.socket_path()},
                                            {"JITCACHE_QUIET", std::string("1")}};
  // Rationale: a Python start varies by hundreds of milliseconds from run to run (page cache, the
  // GPU's power state); alternating the two keeps a drift from landing on one side only.
  (void)timed_run(argv, plain_env);
  std::vector<double> plain;
  std::vector<double> with;
  for (unsigned i = 0; i < options.repeat; ++i) {
    auto a = timed_run(argv, plain_env);
    auto b = timed_run(argv, preloaded);
    if (!a || !b) return;
    plain.push_back(*a);
    with.push_back(*b);
  }
  const double plain_min = *std::min_element(plain.begin(), plain.end());
  const double with_min = *std::min_element(with.begin(), with.end());
  std::printf("  %-44s %10.1f ms median, %.1f ms fastest\n", "without the preload library", median(plain) * 1e3,
              plain_min * 1e3);
  std::printf("  %-44s %10.1f ms median, %.1f ms fastest\n", "with it", median(with) * 1e3, with_min * 1e3);
  const double difference = median(with) - median(plain);
  std::printf("  %-44s %+10.1f ms (%+.1f %%) median, %+.1f ms fastest (target: within 2 %% or 20 ms)\n", "difference",
              difference * 1e3, difference / median(plain) * 100.0, (with_min - plain_min) * 1e3);
}

void bench_cupy(const Options& options) {
  std::cout << "cupy: " << options.cupy_script << " in CuPy's default mode (NVRTC to cubin), " << options.repeat
            << " rounds\n";
  if (options.python.empty() || options.cupy_script.empty()) {
    std::cout << "  SKIPPED: no --python or --cupy-script\n";
    return;
  }
  testing::TempDir dir("jitcache-bench-cupy");
  const std::vector<std::string> argv = {options.python, options.cupy_script};
  std::vector<double> empty;
  for (unsigned i = 0; i < options.repeat; ++i) {
    auto seconds = timed_run(argv, {{"CUPY_CACHE_DIR", dir.file("cupy-empty-" + std::to_string(i))},
                                    {"CUPY_CACHE_IN_MEMORY", std::nullopt},
                                    {"LD_PRELOAD", std::nullopt}});
    if (!seconds) return;
    empty.push_back(*seconds);
  }
  print_ms("CuPy's cache empty", median(empty));
  testing::DaemonProcess daemon(dir);
  daemon.start();
  // CuPy's disk cache on and empty at each start (the script's --fresh-cache): its programs are
  // named in temporary directories of their own (docs/cache-key.md "The program's name").
  std::vector<std::string> fresh_argv = argv;
  fresh_argv.push_back("--fresh-cache");
  const std::vector<EnvChange> warm_env = {{"CUPY_CACHE_DIR", dir.file("cupy-warm")},
                                           {"CUPY_CACHE_IN_MEMORY", std::nullopt},
                                           {"LD_PRELOAD", std::nullopt}};
  const std::vector<EnvChange> preloaded = {{"CUPY_CACHE_IN_MEMORY", std::nullopt},
                                            {"LD_PRELOAD", options.preload},
                                            {"JITCACHE_SOCKET", daemon.socket_path()},
                                            {"JITCACHE_QUIET", std::string("1")}};
  std::vector<EnvChange> in_memory = preloaded;  // unnamed programs: keys of their own
  in_memory.front() = {"CUPY_CACHE_IN_MEMORY", std::string("1")};
  // What the preload costs a start that compiles nothing: CuPy's warm cache under it.
  std::vector<EnvChange> warm_preloaded = preloaded;
  warm_preloaded.front() = {"CUPY_CACHE_DIR", dir.file("cupy-warm")};
  struct Row {
    const char* label;
    const std::vector<std::string>& argv;
    const std::vector<EnvChange>& env;
    std::vector<double> seconds;
  };
  std::vector<Row> rows = {{"CuPy's cache warm", argv, warm_env, {}},
                           {"jitcache run, a hit (CuPy's disk cache empty)", fresh_argv, preloaded, {}},
                           {"jitcache run, a hit (CuPy's cache in memory)", argv, in_memory, {}},
                           {"jitcache run, CuPy's cache warm (preload alone)", argv, warm_preloaded, {}}};
  for (Row& row : rows) {
    if (!timed_run(row.argv, row.env)) return;  // fills CuPy's warm cache and the daemon
  }
  // Rationale: a Python start drifts by hundreds of milliseconds within minutes on the GPU host
  // (docs/benchmarks.md); alternating the rows keeps a drift from landing on one of them only.
  for (unsigned i = 0; i < options.repeat; ++i) {
    for (Row& row : rows) {
      auto seconds = timed_run(row.argv, row.env);
      if (!seconds) return;
      row.seconds.push_back(*seconds);
    }
  }
  for (const Row& row : rows) {
    std::printf("  %-48s %8.1f ms median, %.1f ms fastest\n", row.label, median(row.seconds) * 1e3,
                *std::min_element(row.seconds.begin(), row.seconds.end()) * 1e3);
  }
  const auto against_warm = [&](const Row& row, const char* what) {
    const double warm = median(rows[0].seconds);
    const double warm_min = *std::min_element(rows[0].seconds.begin(), rows[0].seconds.end());
    const double min = *std::min_element(row.seconds.begin(), row.seconds.end());
    std::printf("  %-48s %+8.1f %% median, %+.1f %% fastest%s\n", what, (median(row.seconds) - warm) / warm * 100.0,
                (min - warm_min) / warm_min * 100.0, &row == &rows[1] ? " (target: within 15 %)" : "");
  };
  against_warm(rows[1], "the hit (disk cache empty) against the warm cache");
  against_warm(rows[2], "the hit (in memory) against the warm cache");
  against_warm(rows[3], "the preload alone against the warm cache");
}

}  // namespace
}  // namespace jitcache::bench

int main(int argc, char** argv) {
  using namespace jitcache::bench;
  if (argc == 4 && std::string(argv[1]) == k_child_flag) {
    return child_passthrough(argv[2], static_cast<unsigned>(std::stoul(argv[3])));
  }
  Options options;
  CLI::App app{"bench_transparent: what transparent mode costs and saves"};
  app.add_option("--program", options.program, "an unmodified program that makes the driver JIT");
  app.add_option("--python", options.python, "a Python with torch, for the torch section");
  app.add_option("--preload", options.preload, "libjitcache-preload.so");
  app.add_option("--cubin", options.cubin, "the cubin of the passthrough section (default: a generated one)");
  app.add_option("--repeat", options.repeat, "runs per figure (median)");
  app.add_option("--calls", options.calls, "cuLibraryLoadData calls per passthrough figure");
  app.add_option("--cupy-script", options.cupy_script, "a CuPy program, for the cupy section");
  app.add_option("--sections", options.sections, "program, passthrough, torch, cupy");
  CLI11_PARSE(app, argc, argv);
  const MachineInfo machine = read_machine_info();
  std::cout << "machine: " << machine.cpu_model << ", " << machine.online_cpus << " CPUs, " << machine.kernel << "\n";
  const std::string self = jitcache::testing::self_executable();
  for (const auto& section : options.sections) {
    if (section == "program") bench_program(options);
    if (section == "passthrough") bench_passthrough(options, self);
    if (section == "torch") bench_torch(options);
    if (section == "cupy") bench_cupy(options);
  }
  return 0;
}
