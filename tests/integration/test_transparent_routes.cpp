// Transparent mode (docs/transparent.md): unmodified programs (tests/programs/) run under
// libjitcache-preload.so against the real daemon and the fake driver. Each route to the driver —
// direct binding, cuGetProcAddress_v2 (asked for itself too), dlopen + dlsym, cuLibraryLoadData of a
// fat binary wrapper, a program that forks — caches the PTX the driver would JIT: the second run is
// a hit in the daemon's counters and prints exactly what the first printed; with the daemon down,
// hung or answering garbage, and with JITCACHE_DISABLE=1, the program still prints the same.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <string>
#include <vector>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/transparent_check.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::DaemonProcess;
using jitcache::testing::EnvChange;
using jitcache::testing::run_child;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;
using jitcache::testing::transparent::check_twice;
using jitcache::testing::transparent::run_env;

namespace {

const std::string k_small_ptx = std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx";
const std::string k_ptx_only_fatbin = std::string(JITCACHE_TEST_DATA_DIR) + "/fatbin_kernel_compute90_options.fatbin";

struct Route {
  const char* program;
  std::vector<std::string> args;
};

std::string program_path(const char* name) { return std::string(JITCACHE_ROUTE_PROGRAMS_DIR) + "/" + name; }

ChildResult run_route(const Route& route, const std::vector<EnvChange>& env) {
  std::vector<std::string> argv = {program_path(route.program)};
  argv.insert(argv.end(), route.args.begin(), route.args.end());
  return run_child(argv, env, std::chrono::seconds(60));
}

void check_route(const Route& route, const std::string& expect_in_output, const std::string& entry_point) {
  check_twice([&](const std::vector<EnvChange>& env) { return run_route(route, env); }, expect_in_output, entry_point);
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

TEST_CASE("transparent: cudaGetDriverEntryPoint from a library opened with RTLD_LOCAL reaches its own cudart") {
  const std::string library = std::string(JITCACHE_ROUTE_PROGRAMS_DIR) + "/libcudart_user.so";
  check_route({"route_cudart_local", {library, k_small_ptx, "reduce_partial"}}, "reduce_partial: 0",
              "cuModuleLoadData");
}
