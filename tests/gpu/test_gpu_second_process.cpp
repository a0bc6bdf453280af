// The cache is persistent and shared: what one process compiled, the next process loads as a hit
// (here a copy of this test executable in its hidden child mode, child_load.hpp).
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include <tests/gpu/cache_load.hpp>
#include <tests/gpu/child_load.hpp>
#include <tests/gpu/gpu_paths.hpp>
#include <tests/gpu/gpu_session.hpp>
#include <tests/gpu/kernel_checks.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>

using namespace jitcache::testing;
using namespace jitcache::testing::gpu;

TEST_CASE("gpu: a second process loads small_kernel.ptx as a hit after the first compiled it, and its sums are right") {
  TempDir state("jitcache-gpu");
  DaemonProcess daemon(state);
  daemon.start();
  use_daemon(daemon.socket_path());
  const std::string ptx_path = corpus_dir() + "/small_kernel.ptx";
  const std::string ptx = read_file(ptx_path);

  CacheLoad parent = load_through_cache(ptx.c_str());
  INFO("parent's load: " << parent.describe());
  REQUIRE(parent.result == CUDA_SUCCESS);
  REQUIRE(parent.outcome() == expected_miss_outcome(daemon));
  const KernelCheck parent_sums = check_reduce_partial(driver(), parent.module.get());
  INFO(parent_sums.detail);
  CHECK(parent_sums.ok);

  const ChildResult child = run_child({self_executable(), k_child_load_flag, ptx_path},
                                      {{"JITCACHE_SOCKET", daemon.socket_path()},
                                       {"JITCACHE_QUIET", "1"},
                                       {"JITCACHE_DISABLE", std::nullopt},
                                       {"JITCACHE_CONFIG", std::nullopt}},
                                      std::chrono::seconds(120));
  INFO("child's report: " << child.output);
  CHECK(child.status == 0);
  CHECK(child.output.find("outcome=hit ") != std::string::npos);
  CHECK(child.output.find(std::string("key=") + parent.info.key_id + " ") != std::string::npos);
  CHECK(child.output.find("kernel=ok ") != std::string::npos);
  // A hit from the daemon's published copy reaches the daemon as a HIT_NOTE the child does not wait
  // for, so the count may trail the child's exit by a moment.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (daemon_stat(daemon, "hits") == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(daemon_stat(daemon, "hits") == 1);
}
