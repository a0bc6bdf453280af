// A compile worker dies with its daemon (docs/compile-service.md "The worker and its pipes"): the
// real daemon, killed with SIGKILL in the middle of a compile by the fault worker
// (tests/fakes/fault_compile_worker.cpp, whose "hang" mode never ends), leaves no worker running.
#include <catch2/catch.hpp>

#include <dirent.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <proto/compile_messages.hpp>
#include <proto/jit_options.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using namespace std::chrono_literals;
using testing::DaemonOptions;
using testing::DaemonProcess;
using testing::TempDir;

namespace {

// The "State:" letter and "PPid:" of /proc/<pid>/status; state 0 when the process is gone.
struct ProcState {
  char state = 0;
  pid_t parent = 0;
};

ProcState proc_state(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  ProcState result;
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("State:", 0) == 0) {
      std::istringstream in(line.substr(6));
      in >> result.state;
    }
    if (line.rfind("PPid:", 0) == 0) result.parent = static_cast<pid_t>(std::stol(line.substr(5)));
  }
  return result;
}

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return children;
  while (const dirent* entry = ::readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(name));
    if (proc_state(pid).parent == parent) children.push_back(pid);
  }
  ::closedir(proc);
  return children;
}

// Gone, or a zombie nobody reaped yet (init in a container may not): not running either way.
bool gone(pid_t pid) {
  const char state = proc_state(pid).state;
  return state == 0 || state == 'Z' || state == 'X';
}

}  // namespace

TEST_CASE("compile worker: a daemon killed with SIGKILL mid-compile leaves no worker running") {
  TempDir dir;
  DaemonOptions options;
  options.extra_args = {"--compile-worker",        JITCACHE_FAULT_WORKER_PATH,
                        "--compile-spare-workers", "0",
                        "--compile-wall-time",     "120s"};
  options.extra_env = {{"FAULT_WORKER_VERSION", "13.0"}};
  DaemonProcess daemon(dir, options);
  daemon.start();

  const std::string ptx = "hang\n";
  proto::CompileRequest request;
  request.arch = "sm_90";
  request.driver_api = 13000;
  request.driver_build = "580.159.04";
  request.options = *proto::canonicalize_option_text("");
  request.ptx = proto::as_bytes(ptx);
  std::thread compiling([&] {
    auto client = daemon.client();
    (void)client.compile(request, 60s);  // fails when the daemon dies
  });
  std::vector<pid_t> workers;
  REQUIRE(testing::eventually([&] {
    workers = children_of(daemon.pid());
    return !workers.empty();
  }));
  std::this_thread::sleep_for(100ms);  // the worker has its job and hangs
  daemon.kill_hard();
  compiling.join();
  for (const pid_t worker : workers) {
    INFO("worker " << worker);
    CHECK(testing::eventually([&] { return gone(worker); }, 5s));
  }
}
