// The container-image pattern on a real GPU (docs/operations.md "Container images"): what one
// daemon compiled, exported as a signed bundle and imported by a fresh daemon at its start
// (import_dir), is the very first load of a new process there: a hit, and its kernel sums right.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include <proto/signing.hpp>
#include <tests/gpu/cache_load.hpp>
#include <tests/gpu/child_load.hpp>
#include <tests/gpu/gpu_paths.hpp>
#include <tests/gpu/gpu_session.hpp>
#include <tests/gpu/kernel_checks.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>

using namespace jitcache::testing;
using namespace jitcache::testing::gpu;

TEST_CASE(
    "gpu: a bundle exported by one daemon and imported by a fresh one at start makes a new process's first load a hit") {
  TempDir keys("jitcache-gpu-bundle-keys");
  const std::string builder = keys.file("builder");
  REQUIRE(jitcache::proto::SigningKey::generate().write_pair(builder));

  // The build host: compiles small_kernel.ptx on a real load, then exports what it holds.
  TempDir build_state("jitcache-gpu-bundle-build");
  DaemonOptions build_options;
  build_options.extra_args = {"--remote-signing-key", builder + ".key"};
  DaemonProcess build_host(build_state, build_options);
  build_host.start();
  use_daemon(build_host.socket_path());
  const std::string ptx_path = corpus_dir() + "/small_kernel.ptx";
  const std::string ptx = read_file(ptx_path);
  CacheLoad first = load_through_cache(ptx.c_str());
  INFO("build host's load: " << first.describe());
  REQUIRE(first.result == CUDA_SUCCESS);
  REQUIRE(first.outcome() == expected_miss_outcome(build_host));
  const KernelCheck first_sums = check_reduce_partial(driver(), first.module.get());
  INFO(first_sums.detail);
  CHECK(first_sums.ok);

  TempDir image_dir("jitcache-gpu-bundle-image");
  const ChildResult exported =
      run_child({cli_executable(), "--socket", build_host.socket_path(), "export", "-o", image_dir.file("kernels.jcb")},
                {}, std::chrono::seconds(60));
  INFO("export: " << exported.output);
  REQUIRE(exported.status == 0);

  // The container: a fresh daemon that trusts the builder's key and imports the bundle at start.
  TempDir run_state("jitcache-gpu-bundle-run");
  DaemonOptions run_options;
  run_options.extra_args = {"--remote-trusted-keys", builder + ".pub", "--import-dir", image_dir.path()};
  DaemonProcess container(run_state, run_options);
  container.start();

  const ChildResult child = run_child({self_executable(), k_child_load_flag, ptx_path},
                                      {{"JITCACHE_SOCKET", container.socket_path()},
                                       {"JITCACHE_QUIET", "1"},
                                       {"JITCACHE_DISABLE", std::nullopt},
                                       {"JITCACHE_CONFIG", std::nullopt}},
                                      std::chrono::seconds(120));
  INFO("child's report: " << child.output);
  CHECK(child.status == 0);
  CHECK(child.output.find("outcome=hit ") != std::string::npos);
  CHECK(child.output.find(std::string("key=") + first.info.key_id + " ") != std::string::npos);
  CHECK(child.output.find("kernel=ok ") != std::string::npos);
  CHECK(daemon_stat(container, "bundle_entries_imported") == 1);
  CHECK(daemon_stat(container, "compile_requests") == 0);
}
