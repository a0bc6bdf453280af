// NVRTC compiles of kernels that include the CUDA C++ standard library (libcu++), under
// libjitcache-preload.so against the real daemon, with the toolkit's real NVRTC (no GPU needed).
// libcu++ probes its optional headers through a forwarding macro (`#define _CCCL_HAS_INCLUDE(_X)
// __has_include(_X)` in cuda/std/__cccl/preprocessor.h); the include scan follows such macros
// (docs/cache-key.md "Files read from disk"), so these compiles are cached, and a file probed
// through one that appears or goes away is a miss, not the old answer.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/nvrtc_daemon.hpp>
#include <tests/support/nvrtc_program_run.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>
#include <tests/support/transparent_check.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::EnvChange;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;
using jitcache::testing::nvrtc::NvrtcDaemon;
using jitcache::testing::nvrtc::run_program;
using jitcache::testing::nvrtc::Sources;
using jitcache::testing::transparent::check_twice;

namespace {

// The forwarder is libcu++'s own, defined in a header of the toolkit and called here.
constexpr const char* k_libcuxx_kernel =
    "#include <cuda/std/type_traits>\n"
    "#include \"memory_header.cuh\"\n"
    "#if _CCCL_HAS_INCLUDE(<optional_value.cuh>)\n"
    "#include <optional_value.cuh>\n"
    "#else\n"
    "#define OPTIONAL_VALUE 1\n"
    "#endif\n"
    "template <typename T> __global__ void scale(T* x) {\n"
    "  x[threadIdx.x] *= (T)(OPTIONAL_VALUE + MEMORY_VALUE + cuda::std::is_same<T, float>::value);\n"
    "}\n";

const std::string k_cccl = std::string(JITCACHE_CUDA_INCLUDE_DIR) + "/cccl";

std::vector<std::string> libcuxx_args(const Sources& sources) {
  return {sources.kernel, "scale<float>", "-I" + sources.include_dir, "-I" + k_cccl, "-arch=sm_90"};
}

bool have_libcuxx() { return std::filesystem::exists(k_cccl + "/cuda/std/__cccl/preprocessor.h"); }

}  // namespace

TEST_CASE(
    "transparent nvrtc: (g) a kernel including libcu++, which probes through _CCCL_HAS_INCLUDE, is a hit the second time") {
  if (!have_libcuxx()) JITCACHE_SKIP("no libcu++ (CCCL) headers under " + k_cccl);
  Sources sources(k_libcuxx_kernel);
  check_twice([&](const std::vector<EnvChange>& env) { return run_program(libcuxx_args(sources), env); },
              "lowered=0,_Z5scaleIfEvPT_", "nvrtcCompileProgram");
}

TEST_CASE(
    "transparent nvrtc: (g) a file probed through a forwarding macro that appears between runs is a miss with the new "
    "output, removed again a hit") {
  if (!have_libcuxx()) JITCACHE_SKIP("no libcu++ (CCCL) headers under " + k_cccl);
  Sources sources(k_libcuxx_kernel);
  NvrtcDaemon cache;
  auto client = cache.client();
  const auto cached = [&] { return cache.cached(libcuxx_args(sources)); };
  const auto plain = [&] { return cache.plain(libcuxx_args(sources)); };

  const ChildResult first_plain = plain();
  REQUIRE(first_plain.status == 0);
  const ChildResult first = cached();
  CHECK(first.output == first_plain.output);
  REQUIRE(stat_value(client, "entries") == 1);  // stored: the compile was keyed, not passed through

  const std::string optional = sources.include_dir + "/optional_value.cuh";
  write_file(optional, "#define OPTIONAL_VALUE 5\n");
  const ChildResult appeared_plain = plain();
  REQUIRE(appeared_plain.output != first_plain.output);  // the probe's answer reaches the code
  const auto hits = stat_value(client, "hits");
  const ChildResult appeared = cached();
  CHECK(appeared.output == appeared_plain.output);
  CHECK(stat_value(client, "hits") == hits);
  CHECK(stat_value(client, "entries") == 2);

  std::filesystem::remove(optional);
  const ChildResult removed = cached();
  CHECK(removed.output == first_plain.output);
  CHECK(stat_value(client, "hits") == hits + 1);
  CHECK(stat_value(client, "entries") == 2);
}
