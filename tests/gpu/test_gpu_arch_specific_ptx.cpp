// PTX whose .target is arch-specific (`sm_90a`, as Triton emits) compiles only for that exact
// variant (docs/driver-facts.md §8), so the key must carry it and the load must keep working through the
// cache.
#include <catch2/catch.hpp>

#include <tests/gpu/cache_load.hpp>
#include <tests/gpu/gpu_paths.hpp>
#include <tests/gpu/gpu_session.hpp>
#include <tests/gpu/kernel_checks.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache::testing;
using namespace jitcache::testing::gpu;

namespace {

// small_kernel.ptx with `.target sm_90` replaced by this device's arch-specific target.
std::string arch_specific_ptx(const std::string& arch) {
  std::string ptx = read_corpus_ptx("small_kernel.ptx");
  const std::string plain = "\n.target sm_90\n";
  const auto at = ptx.find(plain);
  if (at == std::string::npos) throw std::runtime_error("small_kernel.ptx has no \".target sm_90\" line");
  ptx.replace(at, plain.size(), "\n.target " + arch + "\n");
  return ptx;
}

}  // namespace

TEST_CASE(
    "gpu: small_kernel.ptx with an arch-specific .target (sm_90a on an H200) is keyed by that arch, cached, and sums right") {
  const GpuDriver& gpu = driver();
  if (gpu.cc_major < 9) {
    JITCACHE_SKIP("arch-specific targets exist from CC 9.0; this GPU is sm_" << gpu.sm());
  }
  const std::string arch = "sm_" + std::to_string(gpu.sm()) + "a";
  const std::string ptx = arch_specific_ptx(arch);
  TempDir state("jitcache-gpu");
  DaemonProcess daemon(state);
  daemon.start();
  use_daemon(daemon.socket_path());

  CacheLoad first = load_through_cache(ptx.c_str());
  INFO("first load: " << first.describe());
  REQUIRE(first.result == CUDA_SUCCESS);
  CHECK(first.outcome() == expected_miss_outcome(daemon));
  CHECK(std::string(first.info.arch) == arch);
  const KernelCheck first_sums = check_reduce_partial(gpu, first.module.get());
  INFO(first_sums.detail);
  CHECK(first_sums.ok);

  CacheLoad second = load_through_cache(ptx.c_str());
  INFO("second load: " << second.describe());
  REQUIRE(second.result == CUDA_SUCCESS);
  CHECK(second.outcome() == "hit");
  CHECK(std::string(second.info.arch) == arch);
  const KernelCheck second_sums = check_reduce_partial(gpu, second.module.get());
  INFO(second_sums.detail);
  CHECK(second_sums.ok);
}
