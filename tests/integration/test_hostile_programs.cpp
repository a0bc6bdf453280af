// Hostile programs (tests/programs/README.md "Hostile programs"): unmodified C programs that do
// what real programs do to descriptors, streams, processes, signals and exit, run plain, under
// libjitcache-preload.so against the real daemon, and with JITCACHE_DISABLE=1. Whatever the cache
// does, the program must see what it sees without it: the same stdout, exit status, CUresults and
// files (docs/transparent.md "What the library guarantees inside a program").
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <proto/published_image.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/transparent_check.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::DaemonProcess;
using jitcache::testing::EnvChange;
using jitcache::testing::run_child;
using jitcache::testing::run_child_captured;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;
using jitcache::testing::transparent::read_file;
using jitcache::testing::transparent::run_env;

namespace {

const std::string k_small_ptx = std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx";
const std::string k_mid_ptx = std::string(JITCACHE_TEST_DATA_DIR) + "/mid_kernels.ptx";
const char* const k_kernel = "reduce_partial";
constexpr std::chrono::seconds k_timeout{60};

std::string program(const char* name) { return std::string(JITCACHE_HOSTILE_PROGRAMS_DIR) + "/" + name; }

std::vector<EnvChange> with(std::vector<EnvChange> env, const std::vector<EnvChange>& extra) {
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// The three runs of one program: plain, under the preload library against `daemon`, disabled.
struct ThreeRuns {
  ChildResult plain;
  ChildResult cached;
  ChildResult disabled;
};

// Runs `argv` three times; `prepare` runs before each (to reset the files the program writes) and
// `collect` after each (appended to the run's output, so that the files are compared too).
ThreeRuns run_three(
    const std::vector<std::string>& argv, const DaemonProcess& daemon, const TempDir& dir,
    const std::vector<EnvChange>& extra = {}, const std::function<void()>& prepare = [] {},
    const std::function<std::string()>& collect = [] { return std::string(); }) {
  ThreeRuns runs;
  auto one = [&](const std::vector<EnvChange>& env) {
    prepare();
    ChildResult result = run_child_captured(argv, with(env, extra), k_timeout);
    result.output += collect();
    return result;
  };
  runs.plain = one(run_env(dir.file("none.sock"), false));
  runs.cached = one(run_env(daemon.socket_path(), true));
  runs.disabled = one(run_env(daemon.socket_path(), true, {{"JITCACHE_DISABLE", std::string("1")}}));
  return runs;
}

void check_same(const ThreeRuns& runs) {
  INFO("plain output:\n" << runs.plain.output << "plain errors:\n" << runs.plain.errors);
  INFO("cached output:\n" << runs.cached.output << "cached errors:\n" << runs.cached.errors);
  CHECK(runs.cached.status == runs.plain.status);
  CHECK(runs.cached.output == runs.plain.output);
  CHECK(runs.disabled.status == runs.plain.status);
  CHECK(runs.disabled.output == runs.plain.output);
}

// run_env's environment with the warnings on (run_env sets JITCACHE_QUIET=1): the runs in which
// the cache's one line is due.
std::vector<EnvChange> loud(std::vector<EnvChange> env) {
  std::erase_if(env, [](const EnvChange& change) { return change.name == "JITCACHE_QUIET"; });
  env.push_back({"JITCACHE_QUIET", std::nullopt});
  return env;
}

struct Fixture {
  TempDir dir;
  DaemonProcess daemon{dir};
  Fixture() { daemon.start(); }
};

}  // namespace

TEST_CASE("hostile: descriptors the program closed and reused are never written, read or closed by the cache") {
  Fixture f;
  const std::string data = f.dir.file("data.txt");
  const auto runs =
      run_three({program("hostile_descriptors"), "reused_fds", k_small_ptx, k_kernel, data}, f.daemon, f.dir);
  REQUIRE(runs.plain.status == 0);
  REQUIRE_THAT(runs.plain.output, Catch::Contains("failed closes: 0") && Catch::Contains("holds 13 bytes"));
  check_same(runs);
  auto client = f.daemon.client();
  CHECK(stat_value(client, "entries") >= 2);  // the load after the reuse reached the daemon
}

TEST_CASE("hostile: a forked child that closes every descriptor and reuses them loses nothing to the cache") {
  Fixture f;
  const std::string data = f.dir.file("child.txt");
  const auto runs =
      run_three({program("hostile_descriptors"), "fork_closes", k_small_ptx, k_kernel, data}, f.daemon, f.dir);
  REQUIRE(runs.plain.status == 0);
  REQUIRE_THAT(runs.plain.output, Catch::Contains("child status 0"));
  check_same(runs);
}

TEST_CASE("hostile: with fds 0-2 closed the program's next open still gets fd 0") {
  Fixture f;
  const std::string data = f.dir.file("std.txt");
  const auto runs = run_three(
      {program("hostile_descriptors"), "closed_std", k_small_ptx, k_kernel, data}, f.daemon, f.dir, {},
      [&] { std::filesystem::remove(data); }, [&] { return read_file(data); });
  REQUIRE_THAT(runs.plain.output, Catch::Contains("the data file is fd 0"));
  check_same(runs);
}

TEST_CASE("hostile: under RLIMIT_NOFILE 16 the cache holds no descriptor after a load") {
  Fixture f;
  const auto runs = run_three({program("hostile_descriptors"), "tiny_rlimit", k_small_ptx, k_kernel}, f.daemon, f.dir);
  REQUIRE(runs.plain.status == 0);
  check_same(runs);
}

TEST_CASE("hostile: loads on other threads while main returns never crash the exit") {
  Fixture f;
  // Warm: the loads at exit are published hits, whose notes the exit used to destroy under them.
  REQUIRE(run_child({program("hostile_exit"), "atexit", k_small_ptx, k_kernel}, run_env(f.daemon.socket_path(), true),
                    k_timeout)
              .status == 0);
  // The crash was a race between exit() destroying the notes and a thread adding one. A program
  // whose own exit work runs after the library's (slow_exit: an atexit handler registered before
  // the first load) holds that window open for 50 ms; without it the window is microseconds.
  // glibc's malloc fills freed memory with a pattern (perturb, no per-thread cache), so a use of
  // freed memory reads garbage rather than the stale values that let it pass unnoticed.
  const std::vector<EnvChange> freed_memory_poisoned = {
      {"GLIBC_TUNABLES", std::string("glibc.malloc.perturb=165:glibc.malloc.tcache_count=0")}};
  for (const char* mode : {"slow_exit", "threads"}) {
    for (int attempt = 0; attempt < 10; ++attempt) {
      INFO(mode << " attempt " << attempt);
      const ChildResult cached =
          run_child_captured({program("hostile_exit"), mode, k_small_ptx, k_kernel},
                             run_env(f.daemon.socket_path(), true, freed_memory_poisoned), k_timeout);
      INFO("cached errors:\n" << cached.errors);
      REQUIRE(cached.status == 0);
      REQUIRE(cached.output == "main load: 0\nmain returns while 16 threads load\n");
    }
  }
  // Without the cache every load of these threads is a JIT, and the fake driver's JIT (nvJitLink)
  // may itself abort when exit() destroys its state under a compiling thread: the plain run is the
  // reference only when it survived; the cached run, whose loads are published hits, always must.
  for (int attempt = 0; attempt < 3; ++attempt) {
    INFO("attempt " << attempt);
    const auto runs = run_three({program("hostile_exit"), "threads", k_small_ptx, k_kernel}, f.daemon, f.dir);
    INFO("cached output:\n" << runs.cached.output << "cached errors:\n" << runs.cached.errors);
    CHECK(runs.cached.status == 0);
    CHECK(runs.cached.output == "main load: 0\nmain returns while 16 threads load\n");
    if (runs.plain.status == 0) CHECK(runs.cached.output == runs.plain.output);
  }
}

TEST_CASE("hostile: loads in atexit handlers, destructors and a constructor's thread work") {
  Fixture f;
  for (const char* mode : {"atexit", "destructor", "constructor"}) {
    INFO(mode);
    for (int round = 0; round < 2; ++round) {  // a miss, then hits (published)
      const auto runs = run_three({program("hostile_exit"), mode, k_small_ptx, k_kernel}, f.daemon, f.dir);
      REQUIRE(runs.plain.status == 0);
      check_same(runs);
    }
  }
}

TEST_CASE("hostile: JITCACHE_REPORT naming a device, a FIFO or /dev/stderr writes into it and never replaces it") {
  Fixture f;
  const std::vector<std::string> argv = {program("hostile_published"), k_small_ptx, k_kernel, "2"};
  SECTION("a character device (a null device of the test's own)") {
    const std::string node = f.dir.file("null");
    REQUIRE(::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    const ChildResult run =
        run_child_captured(argv, loud(run_env(f.daemon.socket_path(), true, {{"JITCACHE_REPORT", node}})), k_timeout);
    CHECK(run.status == 0);
    CHECK(run.errors.empty());
    struct stat st {};
    REQUIRE(::lstat(node.c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  }
  SECTION("a FIFO someone reads gets the report; the FIFO stays") {
    const std::string fifo = f.dir.file("report.fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    // Opened for reading before the run, without waiting for a writer; the report (a few KiB) fits
    // in the pipe's buffer, so it is read after the run.
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    REQUIRE(reader >= 0);
    const ChildResult run =
        run_child_captured(argv, run_env(f.daemon.socket_path(), true, {{"JITCACHE_REPORT", fifo}}), k_timeout);
    std::string received;
    char buffer[4096];
    ssize_t n = 0;
    while ((n = ::read(reader, buffer, sizeof buffer)) > 0) received.append(buffer, static_cast<size_t>(n));
    ::close(reader);
    CHECK(run.status == 0);
    CHECK_THAT(received, Catch::Contains("\"loads\""));
    struct stat st {};
    REQUIRE(::lstat(fifo.c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
  }
  SECTION("a link to /proc/self/fd/2 (as /dev/stderr is) writes the report to stderr; the link stays") {
    const std::string link = f.dir.file("stderr");
    std::filesystem::create_symlink("/proc/self/fd/2", link);
    const ChildResult run =
        run_child_captured(argv, run_env(f.daemon.socket_path(), true, {{"JITCACHE_REPORT", link}}), k_timeout);
    CHECK(run.status == 0);
    CHECK_THAT(run.errors, Catch::Contains("\"loads\""));
    CHECK(std::filesystem::is_symlink(link));
  }
}

TEST_CASE(
    "hostile: a process report pattern of 4096 characters is refused with one line, and children write "
    "no empty reports nor the parent's file") {
  Fixture f;
  SECTION("too long") {
    const std::string pattern = f.dir.file(std::string(4100, 'r'));
    const ChildResult run =
        run_child_captured({program("hostile_published"), k_small_ptx, k_kernel, "1"},
                           loud(run_env(f.daemon.socket_path(), true, {{"JITCACHE_REPORT", pattern}})), k_timeout);
    CHECK(run.status == 0);
    CHECK_THAT(run.errors, Catch::Contains("JITCACHE_REPORT is 4") && Catch::Contains("no load report is written"));
  }
  SECTION("children that load nothing write nothing; without %p a child writes beside the parent's file") {
    const std::string report = f.dir.file("report.json");
    const ChildResult run =
        run_child({program("hostile_processes"), "spawn", k_small_ptx, k_kernel, f.dir.file("daemon-child.txt")},
                  run_env(f.daemon.socket_path(), true, {{"JITCACHE_REPORT", report}}), k_timeout);
    CHECK(run.status == 0);
    // The parent's report is its own (one load), whatever its children did.
    const std::string parent = read_file(report);
    CHECK_THAT(parent, Catch::Contains("\"loads\""));
    CHECK(parent.find("\"forked_from\"") == std::string::npos);
    // The daemon() child loaded (its report lies beside the parent's, by its pid, once it has
    // exited); the vfork and posix_spawn children exec'ed /bin/true, and the middle child that
    // called daemon() loaded nothing: no report of theirs.
    std::vector<std::string> others;
    for (int wait = 0; wait < 100 && others.empty(); ++wait) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      for (const auto& entry : std::filesystem::directory_iterator(f.dir.path())) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("report.json.", 0) == 0 && name.find(".tmp.") == std::string::npos) others.push_back(name);
      }
    }
    REQUIRE(others.size() == 1);
    CHECK_THAT(read_file(f.dir.file(others.front())), Catch::Contains("\"forked_from\""));
  }
}

TEST_CASE("hostile: CU_JIT_TARGET 12345 gets the driver's own answer") {
  Fixture f;
  for (int round = 0; round < 2; ++round) {
    const auto runs = run_three({program("hostile_misuse"), "jit_target", k_small_ptx, k_kernel}, f.daemon, f.dir);
    REQUIRE(runs.plain.status == 0);
    REQUIRE_THAT(runs.plain.output, Catch::Contains("CU_JIT_TARGET 12345: 1\n"));  // CUDA_ERROR_INVALID_VALUE
    check_same(runs);
  }
}

TEST_CASE("hostile: PTX with no NUL before unmapped memory and a log buffer smaller than declared") {
  Fixture f;
  const auto unterminated = run_three({program("hostile_misuse"), "unterminated", k_mid_ptx}, f.daemon, f.dir);
  REQUIRE(unterminated.plain.wait_status != -1);
  check_same(unterminated);
  for (int round = 0; round < 2; ++round) {  // a miss, then a hit
    const auto runs = run_three({program("hostile_misuse"), "short_log", k_small_ptx, k_kernel}, f.daemon, f.dir);
    REQUIRE(runs.plain.status == 0);
    REQUIRE_THAT(runs.plain.output, Catch::Contains("canary intact"));
    check_same(runs);
  }
}

TEST_CASE("hostile: a silent program whose stderr is a closed pipe exits as it would (no SIGPIPE)") {
  TempDir dir;
  const std::vector<std::string> argv = {program("hostile_streams"), "closed_pipe", k_small_ptx, k_kernel};
  // No daemon: the one warning is due; then a report that cannot be written: its line is due too.
  const std::vector<EnvChange> report = {{"JITCACHE_REPORT", dir.file("missing/dir/report.json")}};
  const ChildResult plain = run_child(argv, loud(run_env(dir.file("none.sock"), false, report)), k_timeout);
  REQUIRE(plain.status == 7);
  const ChildResult cached = run_child(argv, loud(run_env(dir.file("none.sock"), true, report)), k_timeout);
  CHECK(cached.status == 7);
  // Only the report's line is due (a socket that answers would not warn): no SIGPIPE at exit either.
  TempDir served;
  DaemonProcess daemon(served);
  daemon.start();
  const ChildResult at_exit = run_child(argv, loud(run_env(daemon.socket_path(), true, report)), k_timeout);
  CHECK(at_exit.status == 7);
}

TEST_CASE("hostile: the warning never goes into a data file the program opened on fd 2") {
  TempDir dir;
  const std::string a = dir.file("a.txt");
  const std::string b = dir.file("b.txt");
  const std::vector<std::string> argv = {program("hostile_streams"), "reopened", k_small_ptx, k_kernel, a, b};
  const ChildResult plain = run_child(argv, loud(run_env(dir.file("none.sock"), false)), k_timeout);
  REQUIRE(plain.status == 0);
  const std::string plain_a = read_file(a);
  const std::string plain_b = read_file(b);
  REQUIRE(plain_b == "data b\n");
  const ChildResult cached = run_child(argv, loud(run_env(dir.file("none.sock"), true)), k_timeout);
  CHECK(cached.status == 0);
  CHECK(read_file(a) == plain_a);
  CHECK(read_file(b) == plain_b);
}

TEST_CASE("hostile: fork without exec while a thread loads, vfork, posix_spawn and daemon()") {
  Fixture f;
  const std::string data = f.dir.file("daemon-child.txt");
  for (int round = 0; round < 2; ++round) {
    const auto forks =
        run_three({program("hostile_processes"), "fork_loading", k_small_ptx, k_kernel}, f.daemon, f.dir);
    REQUIRE_THAT(forks.plain.output, Catch::Contains("16 of 16"));
    REQUIRE_THAT(forks.plain.output, Catch::Contains("load after the forks: 0"));
    check_same(forks);
    const auto spawns = run_three({program("hostile_processes"), "spawn", k_small_ptx, k_kernel, data}, f.daemon, f.dir,
                                  {}, [&] { std::filesystem::remove(data); });
    REQUIRE_THAT(spawns.plain.output, Catch::Contains("daemon() child load 0"));
    check_same(spawns);
  }
}

TEST_CASE("hostile: SIGALRM every millisecond and 64 loading threads") {
  Fixture f;
  for (int round = 0; round < 2; ++round) {
    const auto signals = run_three({program("hostile_processes"), "signals", k_small_ptx, k_kernel}, f.daemon, f.dir);
    REQUIRE_THAT(signals.plain.output, Catch::Contains("every millisecond: 0"));
    check_same(signals);
    const auto threads = run_three({program("hostile_processes"), "threads64", k_small_ptx, k_kernel}, f.daemon, f.dir);
    REQUIRE_THAT(threads.plain.output, Catch::Contains("64 threads: 0"));
    check_same(threads);
  }
}

TEST_CASE("hostile: a hung daemon (SIGSTOP) costs published hits one bounded wait, not one per 64 hits, nor the exit") {
  Fixture f;
  const std::vector<std::string> argv = {program("hostile_published"), k_small_ptx, k_kernel, "640"};
  REQUIRE(run_child(argv, run_env(f.daemon.socket_path(), true), k_timeout).status == 0);  // publishes it
  const auto timed = [&] {
    const auto start = std::chrono::steady_clock::now();
    const ChildResult run = run_child(argv, run_env(f.daemon.socket_path(), true), k_timeout);
    CHECK(run.status == 0);
    CHECK(run.output == "640 loads, 0 failed\n");
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  };
  const auto healthy = timed();
  REQUIRE(::kill(f.daemon.pid(), SIGSTOP) == 0);
  const auto hung = timed();
  ::kill(f.daemon.pid(), SIGCONT);
  INFO("healthy " << healthy.count() << " ms, hung " << hung.count() << " ms");
  // Ten batches of notes: 10 x 200 ms and the exit's wait before; one bounded wait (200 ms) now.
  CHECK(hung - healthy < std::chrono::milliseconds(900));
}

TEST_CASE("hostile: published files rewritten in place under the readers never crash them or reach the driver") {
  Fixture f;
  const std::vector<std::string> argv = {program("hostile_published"), k_mid_ptx,
                                         "_ZN3cub17CUB_300001_SM_9006detail11EmptyKernelIvEEvv", "300"};
  // (No plain run: without the cache each of the 300 loads is a JIT of 365 KB of PTX.)
  REQUIRE(run_child(argv, run_env(f.daemon.socket_path(), true), k_timeout).status == 0);
  const std::string published = jitcache::proto::published_dir_for(f.daemon.socket_path());
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& entry : std::filesystem::directory_iterator(published)) {
    files.emplace_back(entry.path().string(), read_file(entry.path().string()));
  }
  REQUIRE_FALSE(files.empty());
  std::atomic<bool> stop{false};
  std::thread rewriter([&] {
    // In place, as the daemon's uid could: truncated, then the bytes written back a part at a time.
    while (!stop.load()) {
      for (const auto& [path, bytes] : files) {
        const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
        if (fd < 0) continue;
        for (std::size_t done = 0; done < bytes.size();) {
          const ssize_t n = ::write(fd, bytes.data() + done, std::min<std::size_t>(4096, bytes.size() - done));
          if (n <= 0) break;
          done += static_cast<std::size_t>(n);
        }
        ::close(fd);
      }
    }
  });
  const ChildResult cached = run_child(argv, run_env(f.daemon.socket_path(), true), k_timeout);
  stop = true;
  rewriter.join();
  CHECK(cached.status == 0);
  CHECK(cached.output == "300 loads, 0 failed\n");
}
