// Without a daemon the cache must be invisible except for a counter: the program loads its PTX
// from the daemon's published copy when there is one, else exactly as without the cache (the
// driver's own JIT), and its kernels compute the same results.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <chrono>
#include <thread>

#include <tests/gpu/cache_load.hpp>
#include <tests/gpu/gpu_paths.hpp>
#include <tests/gpu/gpu_session.hpp>
#include <tests/gpu/kernel_checks.hpp>
#include <tests/support/daemon_process.hpp>

using namespace jitcache::testing;
using namespace jitcache::testing::gpu;

TEST_CASE(
    "gpu: after the daemon stops, small_kernel.ptx loads from the published copy, else uncached, and sums right") {
  TempDir state("jitcache-gpu");
  DaemonProcess daemon(state);
  daemon.start();
  use_daemon(daemon.socket_path());
  const std::string ptx = read_corpus_ptx("small_kernel.ptx");

  // A load while the daemon runs compiles the entry, which the daemon publishes beside its socket,
  // and leaves a pooled connection that the next load finds dead.
  CacheLoad before = load_through_cache(ptx.c_str());
  INFO("load with the daemon: " << before.describe());
  REQUIRE(before.result == CUDA_SUCCESS);
  // The file is written off the reply's path: wait for it before stopping the daemon.
  for (int i = 0; i < 200 && daemon_stat(daemon, "published_images") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(daemon_stat(daemon, "published_images") == 1);
  REQUIRE(daemon.stop() == 0);

  // The published copy stays as trustworthy as when the daemon wrote it: a hit, checked as any.
  CacheLoad published = load_through_cache(ptx.c_str());
  INFO("load without the daemon, published copy: " << published.describe());
  REQUIRE(published.result == CUDA_SUCCESS);
  CHECK(published.outcome() == "hit");
  const KernelCheck published_sums = check_reduce_partial(driver(), published.module.get());
  INFO(published_sums.detail);
  CHECK(published_sums.ok);
  CHECK(client_counters().published_hits == 1);

  // Without published reads, the dead daemon means the driver's own load.
  ::setenv("JITCACHE_PUBLISHED", "0", 1);
  use_daemon(daemon.socket_path());
  CacheLoad without = load_through_cache(ptx.c_str());
  ::unsetenv("JITCACHE_PUBLISHED");
  INFO("load without the daemon: " << without.describe());
  REQUIRE(without.result == CUDA_SUCCESS);
  CHECK(without.outcome() == "uncached_fallback");
  const KernelCheck sums = check_reduce_partial(driver(), without.module.get());
  INFO(sums.detail);
  CHECK(sums.ok);
  CHECK(client_counters().daemon_unavailable > 0);
  CHECK(client_counters().uncached_fallbacks == 1);
}

TEST_CASE(
    "gpu: with no daemon at the configured socket, small_kernel.ptx loads (uncached fallback) and reduce_partial sums right") {
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
