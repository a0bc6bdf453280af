// Images as nvcc makes them (built at test-build time from tests/data/fatbin_kernel.cu): a fat
// binary holding only compute_80 PTX needs the JIT on any newer GPU and so goes through the cache;
// a plain cubin for this GPU has nothing to compile and goes to the driver as given.
#include <catch2/catch.hpp>

#include <tests/gpu/cache_load.hpp>
#include <tests/gpu/gpu_paths.hpp>
#include <tests/gpu/gpu_session.hpp>
#include <tests/gpu/kernel_checks.hpp>
#include <tests/support/daemon_process.hpp>

using namespace jitcache::testing;
using namespace jitcache::testing::gpu;

namespace {

// The fixture cubin this device runs: the newest one of its CC major no newer than its minor.
std::string native_cubin_name(const GpuDriver& gpu) {
  std::string best;
  for (int sm : {80, 90, 100, 120}) {
    if (sm / 10 == gpu.cc_major && sm % 10 <= gpu.cc_minor) best = "scale_sm" + std::to_string(sm) + ".cubin";
  }
  return best;
}

}  // namespace

TEST_CASE("gpu: an nvcc fat binary with only compute_80 PTX is compiled, then a hit, and its scale kernel is right") {
  TempDir state("jitcache-gpu");
  DaemonProcess daemon(state);
  daemon.start();
  use_daemon(daemon.socket_path());
  const std::string fatbin = read_fixture("scale_compute80.fatbin");

  CacheLoad first = load_through_cache(fatbin.data());
  INFO("first load: " << first.describe());
  REQUIRE(first.result == CUDA_SUCCESS);
  CHECK(first.outcome() == expected_miss_outcome(daemon));
  const KernelCheck first_check = check_scale(driver(), first.module.get());
  INFO(first_check.detail);
  CHECK(first_check.ok);

  CacheLoad second = load_through_cache(fatbin.data());
  INFO("second load: " << second.describe());
  REQUIRE(second.result == CUDA_SUCCESS);
  CHECK(second.outcome() == "hit");
  CHECK(std::string(second.info.key_id) == first.info.key_id);
  const KernelCheck second_check = check_scale(driver(), second.module.get());
  INFO(second_check.detail);
  CHECK(second_check.ok);
}

TEST_CASE("gpu: an nvcc cubin for this GPU passes through to the driver uncached, and its scale kernel is right") {
  const std::string name = native_cubin_name(driver());
  INFO("no cubin fixture for sm_" << driver().sm() << ": add one to tests/gpu/CMakeLists.txt");
  REQUIRE(!name.empty());
  TempDir state("jitcache-gpu");
  DaemonProcess daemon(state);
  daemon.start();
  use_daemon(daemon.socket_path());
  const std::string cubin = read_fixture(name);

  CacheLoad load = load_through_cache(cubin.data());
  INFO("load of " << name << ": " << load.describe());
  REQUIRE(load.result == CUDA_SUCCESS);
  CHECK(load.outcome() == "pass_through");
  CHECK(std::string(load.info.key_id).empty());
  const KernelCheck check = check_scale(driver(), load.module.get());
  INFO(check.detail);
  CHECK(check.ok);
  CHECK(client_counters().pass_through == 1);
  CHECK(daemon_stat(daemon, "entries") == 0);
}
