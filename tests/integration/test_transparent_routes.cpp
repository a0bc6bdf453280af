// Transparent mode (docs/transparent.md): unmodified programs (tests/programs/) run under
// libjitcache-preload.so against the real daemon and the fake driver. Each route to the driver —
// direct binding, cuGetProcAddress_v2 (asked for itself too), dlopen + dlsym, cuLibraryLoadData of a
// fat binary wrapper, a program that forks — caches the PTX the driver would JIT: the second run is
// a hit in the daemon's counters and prints exactly what the first printed; with the daemon down,
// hung or answering garbage, and with JITCACHE_DISABLE=1, the program still prints the same.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::DaemonProcess;
using jitcache::testing::EnvChange;
using jitcache::testing::run_child;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;

namespace {

const std::string k_small_ptx = std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx";
const std::string k_ptx_only_fatbin = std::string(JITCACHE_TEST_DATA_DIR) + "/fatbin_kernel_compute90_options.fatbin";

struct Route {
  const char* program;
  std::vector<std::string> args;
};

std::string program_path(const char* name) { return std::string(JITCACHE_ROUTE_PROGRAMS_DIR) + "/" + name; }

// The environment of a run: the fake driver for the client, the daemon's socket, the preload
// library (unless `preload` is false: the program as it runs without jitcache).
std::vector<EnvChange> run_env(const std::string& socket, bool preload, std::vector<EnvChange> extra = {}) {
  std::vector<EnvChange> env = {
      {"JITCACHE_CUDA_DRIVER", std::string(JITCACHE_FAKE_CUDA_DRIVER)},
      {"JITCACHE_SOCKET", socket},
      {"JITCACHE_QUIET", std::string("1")},
      {"JITCACHE_DISABLE", std::nullopt},
      {"LD_PRELOAD", preload ? std::optional<std::string>(JITCACHE_PRELOAD_LIBRARY) : std::nullopt},
  };
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

ChildResult run_route(const Route& route, const std::vector<EnvChange>& env) {
  std::vector<std::string> argv = {program_path(route.program)};
  argv.insert(argv.end(), route.args.begin(), route.args.end());
  return run_child(argv, env, std::chrono::seconds(60));
}

// A Unix socket that listens at `path` and never answers (a hung daemon) or answers garbage.
int listen_unix(const std::string& path) {
  int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::listen(listener, 16) == 0);
  return listener;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// `entry_point` is what the second run's JITCACHE_REPORT must name with outcome "hit" (the call
// the program made, as the preload library saw it).
void check_route(const Route& route, const std::string& expect_in_output, const std::string& entry_point) {
  TempDir dir;
  // Without jitcache at all: what every run below must print.
  const ChildResult plain = run_route(route, run_env(dir.file("none.sock"), false));
  REQUIRE(plain.status == 0);
  INFO(plain.output);
  REQUIRE_THAT(plain.output, Catch::Contains(expect_in_output));

  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const ChildResult cold = run_route(route, run_env(daemon.socket_path(), true));
  CHECK(cold.status == 0);
  CHECK(cold.output == plain.output);
  const auto hits_after_cold = stat_value(client, "hits");
  const auto entries_after_cold = stat_value(client, "entries");
  CHECK(entries_after_cold >= 1);

  const ChildResult warm =
      run_route(route, run_env(daemon.socket_path(), true, {{"JITCACHE_REPORT", dir.file("report-%p.json")}}));
  CHECK(warm.status == 0);
  CHECK(warm.output == plain.output);
  CHECK(stat_value(client, "hits") > hits_after_cold);
  // The process that loaded wrote its report (a forked child writes its own, by its pid).
  std::string reports;
  for (const auto& file : std::filesystem::directory_iterator(dir.path())) {
    if (file.path().filename().string().rfind("report-", 0) == 0) reports += read_file(file.path().string());
  }
  CHECK_THAT(reports, Catch::Contains("{\"entry_point\": \"" + entry_point + "\", \"outcome\": \"hit\""));
  CHECK(stat_value(client, "entries") == entries_after_cold);

  SECTION("JITCACHE_DISABLE=1 is pure pass-through") {
    const auto hits = stat_value(client, "hits");
    const ChildResult disabled =
        run_route(route, run_env(daemon.socket_path(), true, {{"JITCACHE_DISABLE", std::string("1")}}));
    CHECK(disabled.status == 0);
    CHECK(disabled.output == plain.output);
    CHECK(stat_value(client, "hits") == hits);
  }
  SECTION("a hung daemon (SIGSTOP) costs a bounded wait, not the program") {
    REQUIRE(::kill(daemon.pid(), SIGSTOP) == 0);
    const ChildResult hung = run_route(route, run_env(daemon.socket_path(), true));
    ::kill(daemon.pid(), SIGCONT);
    CHECK(hung.status == 0);
    CHECK(hung.output == plain.output);
  }
  SECTION("a stopped daemon changes nothing the program sees") {
    daemon.stop();
    const ChildResult down = run_route(route, run_env(daemon.socket_path(), true));
    CHECK(down.status == 0);
    CHECK(down.output == plain.output);
  }
  SECTION("a daemon answering garbage changes nothing the program sees") {
    const std::string garbage_socket = dir.file("garbage.sock");
    const int listener = listen_unix(garbage_socket);
    std::atomic<bool> done{false};
    std::thread server([&] {
      while (!done) {
        int peer = ::accept(listener, nullptr, nullptr);
        if (peer < 0) break;
        const char junk[] = "\xff\xff\xff\xff garbage, not a reply";
        [[maybe_unused]] auto n = ::write(peer, junk, sizeof(junk));
        ::close(peer);
      }
    });
    const ChildResult garbage = run_route(route, run_env(garbage_socket, true));
    done = true;
    ::shutdown(listener, SHUT_RDWR);
    ::close(listener);
    server.join();
    CHECK(garbage.status == 0);
    CHECK(garbage.output == plain.output);
  }
}

}  // namespace

TEST_CASE("transparent: (a) direct binding of cuModuleLoadDataEx caches the PTX, and the second run is a hit") {
  check_route({"route_direct", {k_small_ptx, "reduce_partial"}}, "reduce_partial: 0", "cuModuleLoadDataEx");
}

TEST_CASE("transparent: (b) entry points resolved through cuGetProcAddress_v2, itself included, are cached") {
  check_route({"route_proc_address", {k_small_ptx, "reduce_partial"}}, "reduce_partial: 0", "cuModuleLoadData");
}

TEST_CASE("transparent: (c) dlopen + dlsym of libcuda's cuModuleLoadDataEx is cached") {
  check_route({"route_dlsym", {k_small_ptx, "reduce_partial"}}, "reduce_partial: 0", "cuModuleLoadDataEx");
}

TEST_CASE("transparent: (e) cuLibraryLoadData of a PTX-only fat binary wrapper is served as a cached cubin") {
  check_route({"route_library", {k_ptx_only_fatbin, "scale"}}, "scale: 0", "cuLibraryLoadData");
}

TEST_CASE("transparent: (e) a preserved library image stays alive until cuLibraryUnload") {
  check_route({"route_library", {k_ptx_only_fatbin, "scale", "preserve"}}, "cuLibraryUnload: 0", "cuLibraryLoadData");
}

TEST_CASE("transparent: a program that forks and loads in both processes works and hits") {
  check_route({"route_fork", {k_small_ptx, "reduce_partial"}}, "child: load 0, reduce_partial 0", "cuModuleLoadData");
}

TEST_CASE(
    "transparent: cuGetProcAddress at 11.3 for itself is the 4-argument form, RTLD_NEXT keeps its meaning, "
    "dlvsym passes through") {
  check_route({"route_resolvers", {k_small_ptx, "reduce_partial"}}, "next probe_name after a: b (b linked: 1)",
              "cuModuleLoadData");
}

TEST_CASE("transparent: cuModuleLoad of a PTX file and cuModuleLoadFatBinary of a PTX-only container are cached") {
  check_route({"route_module_files", {k_small_ptx, "reduce_partial", k_ptx_only_fatbin, "scale"}},
              "cuModuleLoadFatBinary: 0\nscale: 0", "cuModuleLoadFatBinary");
}

TEST_CASE("transparent: a cubin passes through cuModuleLoadData and cuLibraryLoadData byte for byte, asking nothing") {
  TempDir dir;
  const std::string cubin = dir.file("sm90.cubin");
  const auto bytes = jitcache::testing::make_cubin({}, 7, 4096);
  std::ofstream(cubin, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const Route route{"route_cubin", {cubin}};
  const ChildResult plain = run_route(route, run_env(dir.file("none.sock"), false));
  INFO(plain.output);
  REQUIRE(plain.status == 0);
  REQUIRE_THAT(plain.output, Catch::Contains("library: cuLibraryLoadData kind 1, 4096 bytes"));
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const ChildResult preloaded = run_route(route, run_env(daemon.socket_path(), true));
  CHECK(preloaded.status == 0);
  CHECK(preloaded.output == plain.output);
  CHECK(stat_value(client, "hits") == 0);
  CHECK(stat_value(client, "misses") == 0);
}

TEST_CASE("transparent: on a host with GPUs of two generations a library's PTX goes to the driver as given") {
  TempDir dir;
  const Route route{"route_library", {k_ptx_only_fatbin, "scale"}};
  const std::vector<EnvChange> mixed = {{"FAKE_CUDA_DEVICES", std::string("90,80")}};
  const ChildResult plain = run_route(route, run_env(dir.file("none.sock"), false, mixed));
  INFO(plain.output);
  REQUIRE(plain.status == 0);
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const ChildResult preloaded = run_route(route, run_env(daemon.socket_path(), true, mixed));
  CHECK(preloaded.status == 0);
  CHECK(preloaded.output == plain.output);
  CHECK(stat_value(client, "entries") == 0);
  CHECK(stat_value(client, "misses") == 0);
}

TEST_CASE("transparent: entry points from dynamic cudart's cudaGetDriverEntryPoint{,ByVersion} are cached") {
  check_route({"route_cudart_entry", {k_small_ptx, "reduce_partial"}}, "cuModuleLoadDataEx O2: 0", "cuModuleLoadData");
}
