// NVRTC compiles of kernels that include Thrust from the toolkit's CCCL, as CuPy's do, under
// libjitcache-preload.so against the real daemon, with the toolkit's real NVRTC (no GPU needed).
// Thrust names its systems' headers through object-like macros (`#include
// __THRUST_DEVICE_SYSTEM_TAG_HEADER`, thrust/iterator/detail/device_system_tag.h); the include
// scan expands them over every definition (docs/cache-key.md "Files read from disk"), so these
// compiles are cached, and a header reached only through such an include that changes between
// runs is a miss with the new output, not the old answer.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/nvrtc_program_run.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>
#include <tests/support/transparent_check.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::DaemonProcess;
using jitcache::testing::EnvChange;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;
using jitcache::testing::nvrtc::run_program;
using jitcache::testing::nvrtc::Sources;
using jitcache::testing::nvrtc::write;
using jitcache::testing::transparent::check_twice;
using jitcache::testing::transparent::run_env;

namespace {

// Thrust's complex numbers, as CuPy's kernels use them, and a header of the test's own named the
// way Thrust names its systems' headers: a root macro inside a bracketed macro name.
constexpr const char* k_thrust_kernel =
    "#include <thrust/complex.h>\n"
    "#include <thrust/execution_policy.h>\n"
    "#include \"memory_header.cuh\"\n"
    "#define VALUE_ROOT values/chosen\n"
    "#define VALUE_HEADER <VALUE_ROOT/value.cuh>\n"
    "#include VALUE_HEADER\n"
    "template <typename T> __global__ void scale(T* x) {\n"
    "  x[threadIdx.x] *= (T)(thrust::abs(thrust::complex<T>(MACRO_VALUE, 0)) + MEMORY_VALUE);\n"
    "}\n";

const std::string k_cuda_include = JITCACHE_CUDA_INCLUDE_DIR;

std::vector<std::string> thrust_args(const Sources& sources) {
  return {sources.kernel,        "scale<float>", "-I" + sources.include_dir, "-I" + k_cuda_include + "/cccl",
          "-I" + k_cuda_include, "-arch=sm_90"};
}

bool have_thrust() {
  return std::filesystem::exists(k_cuda_include + "/cccl/thrust/iterator/detail/device_system_tag.h");
}

void set_value(const Sources& sources, int value) {
  write(sources.include_dir + "/values/chosen/value.cuh", "#define MACRO_VALUE " + std::to_string(value) + "\n");
}

}  // namespace

TEST_CASE(
    "transparent nvrtc: (g) a kernel including Thrust, which names headers through macros, is a hit the second "
    "time") {
  if (!have_thrust()) JITCACHE_SKIP("no Thrust (CCCL) headers under " + k_cuda_include);
  Sources sources(k_thrust_kernel);
  set_value(sources, 3);
  check_twice([&](const std::vector<EnvChange>& env) { return run_program(thrust_args(sources), env); },
              "lowered=0,_Z5scaleIfEvPT_", "nvrtcCompileProgram");
}

TEST_CASE(
    "transparent nvrtc: (g) a header reached only through a macro-named include that changes between runs is a miss "
    "with the new output, restored a hit") {
  if (!have_thrust()) JITCACHE_SKIP("no Thrust (CCCL) headers under " + k_cuda_include);
  Sources sources(k_thrust_kernel);
  set_value(sources, 3);
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  const auto cached = [&] { return run_program(thrust_args(sources), run_env(daemon.socket_path(), true)); };
  const auto plain = [&] { return run_program(thrust_args(sources), run_env(state.file("none.sock"), false)); };

  const ChildResult first_plain = plain();
  REQUIRE(first_plain.status == 0);
  const ChildResult first = cached();
  CHECK(first.output == first_plain.output);
  REQUIRE(stat_value(client, "entries") == 1);  // stored: the compile was keyed, not passed through

  set_value(sources, 7);
  const ChildResult changed_plain = plain();
  REQUIRE(changed_plain.output != first_plain.output);  // the header's value reaches the code
  const auto hits = stat_value(client, "hits");
  const ChildResult changed = cached();
  CHECK(changed.output == changed_plain.output);
  CHECK(stat_value(client, "hits") == hits);
  CHECK(stat_value(client, "entries") == 2);

  set_value(sources, 3);
  const ChildResult restored = cached();
  CHECK(restored.output == first_plain.output);
  CHECK(stat_value(client, "hits") == hits + 1);
  CHECK(stat_value(client, "entries") == 2);
}
