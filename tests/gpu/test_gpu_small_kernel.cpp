// The basic promise on a real GPU: a PTX is compiled once, served from the cache afterwards, and
// the kernel computes the same right answer either way.
#include <catch2/catch.hpp>

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
    "gpu: small_kernel.ptx is compiled on the first load, a hit on the second, and reduce_partial sums right both times") {
  TempDir state("jitcache-gpu");
  DaemonProcess daemon(state);
  daemon.start();
  use_daemon(daemon.socket_path());
  const std::string ptx = read_corpus_ptx("small_kernel.ptx");

  CacheLoad first = load_through_cache(ptx.c_str());
  INFO("first load: " << first.describe());
  REQUIRE(first.result == CUDA_SUCCESS);
  CHECK(first.outcome() == expected_miss_outcome(daemon));
  CHECK(std::string(first.info.key_id).size() == 64);
  const KernelCheck first_sums = check_reduce_partial(driver(), first.module.get());
  INFO(first_sums.detail);
  CHECK(first_sums.ok);

  CacheLoad second = load_through_cache(ptx.c_str());
  INFO("second load: " << second.describe());
  REQUIRE(second.result == CUDA_SUCCESS);
  CHECK(second.outcome() == "hit");
  CHECK(std::string(second.info.key_id) == first.info.key_id);
  CHECK(second.info.ns_lookup > 0);
  const KernelCheck second_sums = check_reduce_partial(driver(), second.module.get());
  INFO(second_sums.detail);
  CHECK(second_sums.ok);

  const jitcache_counters counters = client_counters();
  CHECK(counters.loads == 2);
  CHECK(counters.hits == 1);
  CHECK(counters.puts == (first.outcome() == "compiled_locally" ? 1u : 0u));  // the daemon stores what it compiles
  CHECK(counters.daemon_unavailable == 0);
  // A hit from the published copy reaches the daemon as a HIT_NOTE sent later: configuring the
  // library again sends it (as exit would).
  use_daemon(daemon.socket_path());
  for (int i = 0; i < 200 && daemon_stat(daemon, "hits") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(daemon_stat(daemon, "hits") == 1);
  CHECK(daemon_stat(daemon, "entries") == 1);
}
