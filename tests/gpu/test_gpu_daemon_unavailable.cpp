// Without a daemon the cache must be invisible except for a counter: the program loads its PTX
// exactly as without the cache (the driver's own JIT) and its kernels compute the same results.
#include <catch2/catch.hpp>

#include "cache_load.hpp"
#include "daemon_process.hpp"
#include "gpu_paths.hpp"
#include "gpu_session.hpp"
#include "kernel_checks.hpp"

using namespace jitcache::testing;
using namespace jitcache::testing::gpu;

TEST_CASE("gpu: after the daemon stops, small_kernel.ptx still loads (uncached fallback) and reduce_partial sums right") {
  TempDir state("jitcache-gpu");
  DaemonProcess daemon(state);
  daemon.start();
  use_daemon(daemon.socket_path());
  const std::string ptx = read_corpus_ptx("small_kernel.ptx");

  // A load while the daemon runs leaves a pooled connection, which the next load finds dead.
  CacheLoad before = load_through_cache(ptx.c_str());
  INFO("load with the daemon: " << before.describe());
  REQUIRE(before.result == CUDA_SUCCESS);
  REQUIRE(daemon.stop() == 0);

  CacheLoad without = load_through_cache(ptx.c_str());
  INFO("load without the daemon: " << without.describe());
  REQUIRE(without.result == CUDA_SUCCESS);
  CHECK(without.outcome() == "uncached_fallback");
  const KernelCheck sums = check_reduce_partial(driver(), without.module.get());
  INFO(sums.detail);
  CHECK(sums.ok);
  CHECK(client_counters().daemon_unavailable > 0);
  CHECK(client_counters().uncached_fallbacks == 1);
}

TEST_CASE("gpu: with no daemon at the configured socket, small_kernel.ptx loads (uncached fallback) and reduce_partial sums right") {
  TempDir nowhere("jitcache-gpu");
  use_daemon(nowhere.file("no-daemon.sock"));
  const std::string ptx = read_corpus_ptx("small_kernel.ptx");

  CacheLoad load = load_through_cache(ptx.c_str());
  INFO("load: " << load.describe());
  REQUIRE(load.result == CUDA_SUCCESS);
  CHECK(load.outcome() == "uncached_fallback");
  // The key was built before the daemon was tried: the fallback is "no daemon", not "uncacheable".
  CHECK(std::string(load.info.key_id).size() == 64);
  const KernelCheck sums = check_reduce_partial(driver(), load.module.get());
  INFO(sums.detail);
  CHECK(sums.ok);
  CHECK(client_counters().daemon_unavailable == 1);
}
