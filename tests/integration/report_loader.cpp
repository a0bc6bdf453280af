// A program that links libjitcache and loads one module file the way a user's program would, for
// the process report tests (test_client_process_report.cpp): `report_loader FILE [--times N]
// [--threads T] [--fork]` loads FILE N times one after another (default 1), then once on each of T
// threads at the same time, then, with --fork, once more in a forked child, which exits through
// exit() like any program. Prints one line per load ("outcome <name>") and nothing else; exits 0
// when every load succeeded.
#include <jitcache/jitcache.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<bool> g_failed{false};

void load_once(const char* path) {
  CUmodule module = nullptr;
  const CUresult result = jitcache_module_load(&module, path);
  jitcache_load_info info{};
  info.struct_size = sizeof info;
  jitcache_last_load_info(&info);
  std::printf("outcome %s\n", jitcache_outcome_name(info.outcome));
  if (result != CUDA_SUCCESS) {
    std::fprintf(stderr, "report_loader: load %d: %s\n", static_cast<int>(result), info.reason);
    g_failed = true;
    return;
  }
  jitcache_module_unload(module);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [--times N] [--threads T] [--fork]\n", argv[0]);
    return 2;
  }
  int times = 1;
  int threads = 0;
  bool fork_child = false;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--times") == 0 && i + 1 < argc) {
      times = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--fork") == 0) {
      fork_child = true;
    } else {
      std::fprintf(stderr, "report_loader: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  for (int i = 0; i < times; ++i) load_once(argv[1]);
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(threads > 0 ? threads : 0));
  for (int i = 0; i < threads; ++i) workers.emplace_back(load_once, argv[1]);
  for (auto& worker : workers) worker.join();
  std::fflush(stdout);
  if (fork_child) {
    const pid_t child = ::fork();
    if (child < 0) return 1;
    if (child == 0) {
      load_once(argv[1]);
      std::exit(g_failed ? 1 : 0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) g_failed = true;
  }
  return g_failed ? 1 : 0;
}
