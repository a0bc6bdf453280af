// A large real-world module (CUB radix sort, reduce and scan for 8 types: 3.2 MB of PTX, 65
// kernels) survives the round trip through the cache: every kernel of the PTX can be fetched
// from the compiled module and from the cached one.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <tests/gpu/cache_load.hpp>
#include <tests/gpu/gpu_paths.hpp>
#include <tests/gpu/gpu_session.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/ptx_entries.hpp>

using namespace jitcache::testing;
using namespace jitcache::testing::gpu;

namespace {

// The kernels `module` cannot resolve, with the driver's answer for each.
std::vector<std::string> unresolvable(CUmodule module, const std::vector<std::string>& names) {
  std::vector<std::string> missing;
  for (const auto& name : names) {
    CUfunction function = nullptr;
    const CUresult r = driver().module_get_function(&function, module, name.c_str());
    if (r != CUDA_SUCCESS || function == nullptr) missing.push_back(name + ": " + driver().describe(r));
  }
  return missing;
}

}  // namespace

TEST_CASE(
    "gpu: every one of the 65 kernels of cub_kernels.ptx resolves from the compiled module and from the cached one") {
  const std::string ptx = read_corpus_ptx("cub_kernels.ptx");
  const auto names = ptx_entry_names(ptx);
  REQUIRE(names.size() == 65);

  TempDir state("jitcache-gpu");
  DaemonProcess daemon(state);
  daemon.start();
  use_daemon(daemon.socket_path());

  CacheLoad compiled = load_through_cache(ptx.c_str());
  INFO("first load: " << compiled.describe());
  REQUIRE(compiled.result == CUDA_SUCCESS);
  CHECK(compiled.outcome() == expected_miss_outcome(daemon));
  CHECK(unresolvable(compiled.module.get(), names) == std::vector<std::string>{});
  CHECK(client_counters().puts == (compiled.outcome() == "compiled_locally" ? 1u : 0u));

  CacheLoad cached = load_through_cache(ptx.c_str());
  INFO("second load: " << cached.describe());
  REQUIRE(cached.result == CUDA_SUCCESS);
  CHECK(cached.outcome() == "hit");
  CHECK(unresolvable(cached.module.get(), names) == std::vector<std::string>{});
}
