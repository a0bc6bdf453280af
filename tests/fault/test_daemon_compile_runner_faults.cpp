// CompileRunner (daemon/compile/compile_runner.hpp) against a worker that misbehaves on request
// (tests/fakes/fault_compile_worker.cpp): a crash, a hang, a memory or CPU hog, garbage, a lie or
// an odd exit each becomes worker_failed with a message saying which, the test process is
// unharmed, and no worker is left behind, zombie or alive; the same holds for a spare worker that
// waited for its job (spare_workers.hpp).
#include <catch2/catch.hpp>

#include <tests/support/eventually.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <daemon/compile/compile_runner.hpp>

namespace {

using jitcache::testing::eventually;

using namespace jitcache::daemon::compile;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

CompileLimits fast_limits() {
  CompileLimits limits;
  limits.cpu_time = 10s;
  limits.address_space_bytes = std::uint64_t{1} << 30;
  limits.wall_time = 2s;
  return limits;
}

CompileJob job(const std::string& mode) {
  CompileJob j;
  j.arch = "sm_90";
  j.ptx.assign(mode.begin(), mode.end());
  return j;
}

CompileOutcome run_mode(const std::string& mode, CompileLimits limits = fast_limits()) {
  CompileRunner runner(JITCACHE_FAULT_WORKER_PATH, limits);
  return runner.run(job(mode));
}

// No child of this process is left: every worker was reaped (no zombie) and none still runs.
void expect_no_children() {
  errno = 0;
  CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
}

void expect_failure(const CompileOutcome& outcome, WorkerFailure failure, const std::string& says) {
  INFO(outcome.message);
  CHECK(outcome.kind == OutcomeKind::worker_failed);
  CHECK(outcome.failure == failure);
  CHECK_THAT(outcome.message, Catch::Contains(says));
  expect_no_children();
}

}  // namespace

TEST_CASE("compile runner faults: a worker that dies of SIGSEGV is reported as a crash with its signal") {
  expect_failure(run_mode("crash"), WorkerFailure::crashed, "signal 11 (SIGSEGV)");
}

TEST_CASE("compile runner faults: a hung worker is killed at the wall-time limit") {
  CompileLimits limits = fast_limits();
  limits.wall_time = 300ms;
  const auto start = Clock::now();
  const CompileOutcome outcome = run_mode("hang", limits);
  CHECK(Clock::now() - start < 2s);
  expect_failure(outcome, WorkerFailure::wall_time, "wall-time limit of 0.300 s");
}

TEST_CASE("compile runner faults: a worker that never reads a large job is killed, and the writer never blocks") {
  CompileLimits limits = fast_limits();
  limits.wall_time = 300ms;
  std::string ptx = "no-read";
  ptx.resize(16 << 20, 'x');  // far more than a socket buffer holds
  CompileRunner runner(JITCACHE_FAULT_WORKER_PATH, limits);
  const auto start = Clock::now();
  const CompileOutcome outcome = runner.run(job(ptx));
  // Rationale: a blocked writer would wait for ever; 5 s leaves a loaded 2-core machine room
  // for the 300 ms limit, the kill and the reaping.
  CHECK(Clock::now() - start < 5s);
  expect_failure(outcome, WorkerFailure::wall_time, "wall-time limit");
}

TEST_CASE("compile runner faults: a worker over its address-space limit is reported as out of memory") {
  CompileLimits limits = fast_limits();
  limits.address_space_bytes = std::uint64_t{512} << 20;
  expect_failure(run_mode("memory", limits), WorkerFailure::memory, "memory limit of 512 MiB");
}

TEST_CASE("compile runner faults: a worker over its CPU limit is reported as such") {
  CompileLimits limits = fast_limits();
  limits.cpu_time = 1s;
  limits.wall_time = 10s;
  expect_failure(run_mode("spin", limits), WorkerFailure::cpu_time, "CPU time limit of 1 s");
}

TEST_CASE("compile runner faults: garbage or a truncated reply on stdout is a protocol failure") {
  expect_failure(run_mode("garbage"), WorkerFailure::protocol, "garbage on its stdout");
  expect_failure(run_mode("truncated"), WorkerFailure::protocol, "garbage on its stdout");
}

TEST_CASE("compile runner faults: a reply of success without an ELF image is not believed") {
  expect_failure(run_mode("not-elf"), WorkerFailure::protocol, "no ELF image");
}

TEST_CASE("compile runner faults: an unexpected exit status is reported with the worker's stderr") {
  expect_failure(run_mode("exit7"), WorkerFailure::protocol, "status 7; its stderr: fault worker: exiting with 7");
}

TEST_CASE("compile runner faults: a missing worker executable is a spawn failure naming the path") {
  CompileRunner runner("/nonexistent/jitcache-compile", fast_limits());
  expect_failure(runner.run(job("ok")), WorkerFailure::spawn, "/nonexistent/jitcache-compile");
}

TEST_CASE("compile runner faults: the worker gets only its three pipes and the configured limits") {
  // A descriptor without CLOEXEC, as a careless daemon might hold (the store, a client socket).
  const int leaked = ::open("/dev/null", O_RDONLY);
  REQUIRE(leaked > 2);
  CompileLimits limits = fast_limits();
  limits.cpu_time = 7s;
  limits.address_space_bytes = std::uint64_t{768} << 20;
  const CompileOutcome outcome = run_mode("report", limits);
  ::close(leaked);
  INFO(outcome.message);
  REQUIRE(outcome.kind == OutcomeKind::compile_error);
  CHECK(outcome.message == "fds=0,1,2 cpu=7/8 as=" + std::to_string(768u << 20) + "/" + std::to_string(768u << 20));
  expect_no_children();
}

TEST_CASE("compile runner faults: a well-behaved worker after all of the above still compiles") {
  const CompileOutcome outcome = run_mode("ok");
  CHECK(outcome.kind == OutcomeKind::compiled);
  CHECK(outcome.producer == "nvJitLink 13.0");
  expect_no_children();
}

TEST_CASE("compile runner faults: a stop request kills the running worker at once") {
  CompileLimits limits = fast_limits();
  limits.wall_time = 30s;
  CompileRunner runner(JITCACHE_FAULT_WORKER_PATH, limits);
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    stop = true;
  });
  const auto start = Clock::now();
  const CompileOutcome outcome = runner.run(job("hang"), stop);
  stopper.join();
  CHECK(Clock::now() - start < 2s);
  expect_failure(outcome, WorkerFailure::cancelled, "stopping");
}

TEST_CASE("compile runner faults: probing a worker that is not jitcache-compile fails clearly") {
  CompileRunner runner(JITCACHE_FAULT_WORKER_PATH, fast_limits());
  const auto version = runner.probe_toolkit();
  REQUIRE_FALSE(version);
  CHECK_THAT(version.error().message, Catch::Contains("--version did not print"));
  expect_no_children();
}

namespace {

// The pids of this process's children, whichever of its threads started them.
std::vector<pid_t> children() {
  std::vector<pid_t> pids;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "children");
    for (pid_t pid = 0; in >> pid;) pids.push_back(pid);
  }
  return pids;
}

}  // namespace

TEST_CASE(
    "compile runner faults: a spare worker that waited for its job is held to the same pipes, limits and faults") {
  CompileLimits limits = fast_limits();
  limits.cpu_time = 7s;
  limits.address_space_bytes = std::uint64_t{768} << 20;
  {
    CompileRunner runner(JITCACHE_FAULT_WORKER_PATH, limits);
    runner.keep_spares(1);
    REQUIRE(eventually([] { return children().size() == 1; }));  // the spare, waiting
    const CompileOutcome reported = runner.run(job("report"));
    INFO(reported.message);
    REQUIRE(reported.kind == OutcomeKind::compile_error);
    CHECK(reported.message == "fds=0,1,2 cpu=7/8 as=" + std::to_string(768u << 20) + "/" + std::to_string(768u << 20));
    REQUIRE(eventually([] { return children().size() == 1; }));  // started again after it was taken
    const CompileOutcome crashed = runner.run(job("crash"));
    CHECK(crashed.failure == WorkerFailure::crashed);
    REQUIRE(eventually([] { return children().size() == 1; }));
    CHECK(runner.run(job("ok")).kind == OutcomeKind::compiled);
  }
  // The runner gone, its spare was killed and reaped with it.
  expect_no_children();
}

TEST_CASE("compile runner faults: a spare killed while it waits is passed over, and the job still compiles") {
  {
    CompileRunner runner(JITCACHE_FAULT_WORKER_PATH, fast_limits());
    runner.keep_spares(1);
    REQUIRE(eventually([] { return children().size() == 1; }));
    const pid_t spare = children().front();
    REQUIRE(::kill(spare, SIGKILL) == 0);
    // Dead but not reaped: only the runner may reap its children.
    REQUIRE(eventually([&] {
      std::ifstream stat("/proc/" + std::to_string(spare) + "/stat");
      std::string pid, name, state;
      return stat >> pid >> name >> state && state == "Z";
    }));
    const CompileOutcome outcome = runner.run(job("ok"));
    INFO(outcome.message);
    CHECK(outcome.kind == OutcomeKind::compiled);
  }
  expect_no_children();
}

TEST_CASE("compile runner faults: a spare's wall-time limit counts from its job, not from its start") {
  CompileLimits limits = fast_limits();
  limits.wall_time = 1s;
  CompileRunner runner(JITCACHE_FAULT_WORKER_PATH, limits);
  runner.keep_spares(1);
  REQUIRE(eventually([] { return children().size() == 1; }));
  std::this_thread::sleep_for(1500ms);  // longer than the wall time, waiting for a job
  CHECK(runner.run(job("ok")).kind == OutcomeKind::compiled);
  const auto start = Clock::now();
  const CompileOutcome hung = runner.run(job("hang"));
  CHECK(hung.failure == WorkerFailure::wall_time);
  CHECK(Clock::now() - start >= 900ms);
}

TEST_CASE("compile runner faults: with a worker that cannot be started, spares are not retried in a loop") {
  CompileRunner runner("/nonexistent/jitcache-compile", fast_limits());
  runner.keep_spares(2);
  std::this_thread::sleep_for(300ms);
  CHECK(children().empty());
  expect_failure(runner.run(job("ok")), WorkerFailure::spawn, "/nonexistent/jitcache-compile");
}
