// bench_preload: what libjitcache-preload.so costs a process that does not need the cache
// (docs/benchmarks.md "Start-up cost"). Figures are printed, never asserted.
//
//   startup   CPU time (user + system, from the children's rusage) and wall time per run of
//             /bin/true: plain, with the library in LD_PRELOAD, under `jitcache run` (the front),
//             and under `jitcache-cli run` (the full CLI, for comparison); the runs
//             of the four alternate in --rounds rounds of --runs each, and the median round is
//             printed. Targets: preloaded within 0.15 ms CPU of plain, `jitcache run` within 1.5 ms.
//   lookups   per call (the fastest batch of 200), in a child of its own, with and without the
//             library: dlsym of a name the
//             library does not hook (on the driver's handle and RTLD_DEFAULT), cuGetProcAddress_v2
//             of an entry point it does not hook, and cuModuleLoadData (+ cuModuleUnload) of a
//             cubin, which passes through. Targets: lookups within 20 ns of plain, the cubin load
//             within 2 us.
//
// The driver is the fake of tests/fakes (linked; JITCACHE_CUDA_DRIVER names it for the library).
#include <cuda.h>
#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double cpu_seconds(const rusage& usage) {
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// Runs argv `count` times with LD_PRELOAD set to `preload` ("" removes it); returns {CPU, wall}
// per run in milliseconds.
std::pair<double, double> run_many(const std::vector<std::string>& argv, const std::string& preload, int count) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0) env_text.emplace_back(*e);
  }
  if (!preload.empty()) env_text.push_back("LD_PRELOAD=" + preload);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);
  rusage before{};
  ::getrusage(RUSAGE_CHILDREN, &before);
  const auto start = Clock::now();
  for (int i = 0; i < count; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execve(argp[0], argp.data(), envp.data());
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "bench_preload: %s exited with status %d\n", argv[0].c_str(), status);
    }
  }
  const double wall = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  rusage after{};
  ::getrusage(RUSAGE_CHILDREN, &after);
  return {(cpu_seconds(after) - cpu_seconds(before)) * 1000.0 / count, wall / count};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void startup(const std::string& preload, int rounds, int runs) {
  struct Variant {
    const char* name;
    std::vector<std::string> argv;
    std::string preload;
    std::vector<double> cpu;
    std::vector<double> wall;
  };
  std::vector<Variant> variants = {
      {"plain /bin/true", {"/bin/true"}, "", {}, {}},
      {"LD_PRELOAD=libjitcache-preload.so /bin/true", {"/bin/true"}, preload, {}, {}},
      {"jitcache run -- /bin/true", {jitcache::testing::cli_executable(), "run", "--", "/bin/true"}, "", {}, {}},
      // The full CLI, which ran `jitcache run` itself before the front (client/front/main.c).
      {"jitcache-cli run -- /bin/true (no front)", {JITCACHE_FULL_CLI_PATH, "run", "--", "/bin/true"}, "", {}, {}},
  };
  ::setenv("JITCACHE_PRELOAD_LIBRARY", preload.c_str(), 1);
  for (int round = 0; round < rounds; ++round) {
    for (Variant& variant : variants) {
      const auto [cpu, wall] = run_many(variant.argv, variant.preload, runs);
      variant.cpu.push_back(cpu);
      variant.wall.push_back(wall);
    }
  }
  std::printf("startup (median of %d rounds of %d runs; per run)\n", rounds, runs);
  const double plain_cpu = median(variants[0].cpu);
  const double plain_wall = median(variants[0].wall);
  for (const Variant& variant : variants) {
    std::printf("  %-46s CPU %.3f ms (%+.3f)   wall %.3f ms (%+.3f)\n", variant.name, median(variant.cpu),
                median(variant.cpu) - plain_cpu, median(variant.wall), median(variant.wall) - plain_wall);
  }
}

// The child: each measurement, per call in nanoseconds, one line each.
int child(const std::string& cubin_path, int calls) {
  void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cuda == nullptr) return 3;
  // Rationale: on a shared machine a mean is mostly other processes' time; the fastest of many
  // short batches is what the call itself costs (the same rule for both runs).
  auto per_call = [calls](auto&& body) {
    constexpr int k_batch = 200;
    for (int i = 0; i < k_batch; ++i) body();  // warm-up
    double fastest = 1e300;
    for (int batch = 0; batch < calls / k_batch; ++batch) {
      const auto start = Clock::now();
      for (int i = 0; i < k_batch; ++i) body();
      fastest = std::min(fastest, std::chrono::duration<double, std::nano>(Clock::now() - start).count() / k_batch);
    }
    return fastest;
  };
  void* volatile sink = nullptr;
  std::printf("dlsym(libcuda, \"cuDeviceGetAttribute\") %.1f\n",
              per_call([&] { sink = ::dlsym(cuda, "cuDeviceGetAttribute"); }));
  std::printf("dlsym(RTLD_DEFAULT, \"cuDeviceGetAttribute\") %.1f\n",
              per_call([&] { sink = ::dlsym(RTLD_DEFAULT, "cuDeviceGetAttribute"); }));
  std::printf("dlsym(RTLD_DEFAULT, \"malloc\") %.1f\n", per_call([&] { sink = ::dlsym(RTLD_DEFAULT, "malloc"); }));
  using ProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto resolver = reinterpret_cast<ProcAddress>(::dlsym(cuda, "cuGetProcAddress_v2"));
  if (resolver == nullptr || ::cuInit(0) != CUDA_SUCCESS) return 4;
  void* pfn = nullptr;
  std::printf("cuGetProcAddress_v2(\"cuDeviceGetAttribute\") %.1f\n",
              per_call([&] { resolver("cuDeviceGetAttribute", &pfn, 13000, 0, nullptr); }));
  std::ifstream in(cubin_path, std::ios::binary);
  const std::vector<char> cubin((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::printf("cuModuleLoadData(cubin) + cuModuleUnload %.1f\n", per_call([&] {
                CUmodule module = nullptr;
                if (::cuModuleLoadData(&module, cubin.data()) == CUDA_SUCCESS) ::cuModuleUnload(module);
              }));
  (void)sink;
  return 0;
}

// name -> ns per call, from the child's lines.
std::vector<std::pair<std::string, double>> parse(const std::string& output) {
  std::vector<std::pair<std::string, double>> rows;
  std::size_t at = 0;
  while (at < output.size()) {
    const std::size_t end = output.find('\n', at);
    const std::string line = output.substr(at, end - at);
    const std::size_t space = line.rfind(' ');
    if (space != std::string::npos) rows.emplace_back(line.substr(0, space), std::atof(line.c_str() + space + 1));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return rows;
}

void lookups(const std::string& preload, int calls, int rounds) {
  jitcache::testing::TempDir dir;
  const std::string cubin = dir.file("sm90.cubin");
  const auto bytes = jitcache::testing::make_cubin({}, 5, 4096);
  std::ofstream(cubin, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const std::vector<std::string> argv = {jitcache::testing::self_executable(), "--child", cubin, std::to_string(calls)};
  std::vector<std::vector<std::pair<std::string, double>>> plain;
  std::vector<std::vector<std::pair<std::string, double>>> preloaded;
  for (int round = 0; round < rounds; ++round) {
    for (const bool with : {false, true}) {
      const auto result =
          jitcache::testing::run_child(argv,
                                       {{"LD_PRELOAD", with ? std::optional<std::string>(preload) : std::nullopt},
                                        {"JITCACHE_SOCKET", dir.file("none.sock")},
                                        {"JITCACHE_QUIET", std::string("1")}},
                                       std::chrono::seconds(120));
      if (result.status != 0) {
        std::printf("lookups: the child failed (status %d)\n", result.status);
        return;
      }
      (with ? preloaded : plain).push_back(parse(result.output));
    }
  }
  std::printf("lookups (ns per call, median of %d child processes each, %d calls)\n", rounds, calls);
  for (std::size_t row = 0; row < plain.front().size(); ++row) {
    std::vector<double> a;
    std::vector<double> b;
    for (int r = 0; r < rounds; ++r) {
      a.push_back(plain[r][row].second);
      b.push_back(preloaded[r][row].second);
    }
    std::printf("  %-50s plain %8.1f   preloaded %8.1f   (%+.1f)\n", plain.front()[row].first.c_str(), median(a),
                median(b), median(b) - median(a));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--child") == 0) return child(argv[2], std::atoi(argv[3]));
  std::string preload = JITCACHE_PRELOAD_LIBRARY_PATH;
  int rounds = 7;
  int runs = 40;
  int calls = 200000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--rounds") rounds = std::atoi(argv[i + 1]);
    if (option == "--runs") runs = std::atoi(argv[i + 1]);
    if (option == "--calls") calls = std::atoi(argv[i + 1]);
    if (option == "--preload") preload = argv[i + 1];
  }
  const auto machine = jitcache::bench::read_machine_info();
  std::printf("machine: %s, %u CPUs (%u usable), kernel %s, load average %.2f\n", machine.cpu_model.c_str(),
              machine.online_cpus, machine.usable_cpus, machine.kernel.c_str(), machine.load_average);
  ::setenv("JITCACHE_CUDA_DRIVER", JITCACHE_FAKE_CUDA_DRIVER, 1);
  startup(preload, rounds, runs);
  lookups(preload, calls, rounds);
  return 0;
}
