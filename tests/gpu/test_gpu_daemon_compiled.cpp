// Images the daemon compiled (COMPILE, nvJitLink in a jitcache-compile worker) load on the real GPU
// and compute right: the first load of a PTX is compiled_by_daemon — no JIT in the
// process, no PUT — and the kernel's results are checked, for the small kernel and for all 65 CUB
// kernels. A daemon that cannot compile here (no worker, no nvJitLink) fails these tests rather than
// letting them pass as local compiles.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <tests/gpu/cache_load.hpp>
#include <tests/gpu/gpu_paths.hpp>
#include <tests/gpu/gpu_session.hpp>
#include <tests/gpu/kernel_checks.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/ptx_entries.hpp>

using namespace jitcache::testing;
using namespace jitcache::testing::gpu;

namespace {

struct CompilingDaemon {
  TempDir state{"jitcache-gpu"};
  DaemonProcess daemon{state};
  CompilingDaemon() {
    daemon.start();
    use_daemon(daemon.socket_path());
    INFO("the daemon's log: " << daemon.log_path());
    REQUIRE(expected_miss_outcome(daemon) == "compiled_by_daemon");
  }
};

}  // namespace

TEST_CASE("gpu: small_kernel.ptx compiled by the daemon loads, and reduce_partial sums right") {
  CompilingDaemon live;
  const std::string ptx = read_corpus_ptx("small_kernel.ptx");

  CacheLoad compiled = load_through_cache(ptx.c_str());
  INFO("first load: " << compiled.describe());
  REQUIRE(compiled.result == CUDA_SUCCESS);
  CHECK(compiled.outcome() == "compiled_by_daemon");
  CHECK(std::string(compiled.info.arch) == "sm_90a");
  const KernelCheck sums = check_reduce_partial(driver(), compiled.module.get());
  INFO(sums.detail);
  CHECK(sums.ok);
  CHECK(client_counters().compiled_by_daemon == 1);
  CHECK(client_counters().puts == 0);
  CHECK(daemon_stat(live.daemon, "compiles") == 1);

  CacheLoad cached = load_through_cache(ptx.c_str());
  INFO("second load: " << cached.describe());
  REQUIRE(cached.result == CUDA_SUCCESS);
  CHECK(cached.outcome() == "hit");
  const KernelCheck again = check_reduce_partial(driver(), cached.module.get());
  INFO(again.detail);
  CHECK(again.ok);
  CHECK(daemon_stat(live.daemon, "compiles") == 1);
}

TEST_CASE("gpu: cub_kernels.ptx compiled by the daemon loads, and all 65 kernels resolve") {
  CompilingDaemon live;
  const std::string ptx = read_corpus_ptx("cub_kernels.ptx");
  const auto names = ptx_entry_names(ptx);
  REQUIRE(names.size() == 65);

  CacheLoad compiled = load_through_cache(ptx.c_str());
  INFO("first load: " << compiled.describe());
  REQUIRE(compiled.result == CUDA_SUCCESS);
  CHECK(compiled.outcome() == "compiled_by_daemon");
  std::vector<std::string> missing;
  for (const auto& name : names) {
    CUfunction function = nullptr;
    const CUresult r = driver().module_get_function(&function, compiled.module.get(), name.c_str());
    if (r != CUDA_SUCCESS || function == nullptr) missing.push_back(name + ": " + driver().describe(r));
  }
  CHECK(missing == std::vector<std::string>{});
  CHECK(daemon_stat(live.daemon, "compiles") == 1);
  CHECK(daemon_stat(live.daemon, "compile_failures") == 0);
}
