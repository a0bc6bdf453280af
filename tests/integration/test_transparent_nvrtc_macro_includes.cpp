// NVRTC compiles of kernels that include Thrust from the toolkit's CCCL, as CuPy's do, under
// libjitcache-preload.so against the real daemon, with the toolkit's real NVRTC (no GPU needed).
// Thrust names its systems' headers through object-like macros (`#include
// __THRUST_DEVICE_SYSTEM_TAG_HEADER`, thrust/iterator/detail/device_system_tag.h); the include
// scan expands them over every definition (docs/cache-key.md "Files read from disk"), so these
// compiles are cached, and a header reached only through such an include that changes between
// runs is a miss with the new output, not the old answer.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <string>
#include <utility>
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
using jitcache::testing::write_file;
using jitcache::testing::nvrtc::run_program;
using jitcache::testing::nvrtc::Sources;
using jitcache::testing::transparent::run_env;

namespace {

// CUB's block reduction, as CuPy's reduction kernels include it, Thrust's device system tag (its
// `#include __THRUST_DEVICE_SYSTEM_TAG_HEADER`; Thrust's headers that reach <memory> or <cmath>
// do not compile under NVRTC without a C++ library), and a header of the test's own named the way
// Thrust names its systems' headers: a root macro inside a bracketed macro name. What that header
// holds changes the PTX's size, so a new output can be told from the old.
constexpr const char* k_thrust_kernel =
    "#include <cub/block/block_reduce.cuh>\n"
    "#include <thrust/iterator/detail/device_system_tag.h>\n"
    "#include \"memory_header.cuh\"\n"
    "#define VALUE_ROOT values/chosen\n"
    "#define VALUE_HEADER <VALUE_ROOT/value.cuh>\n"
    "#include VALUE_HEADER\n"
    "EXTRA_KERNEL\n"
    "template <typename T> __global__ void scale(T* x) {\n"
    "  using Reduce = cub::BlockReduce<T, 32>;\n"
    "  static_assert(sizeof(thrust::device_system_tag) > 0, \"\");\n"
    "  x[threadIdx.x] *= (T)(MEMORY_VALUE + sizeof(typename Reduce::TempStorage) / 1000000);\n"
    "}\n";

const std::string k_cuda_include = JITCACHE_CUDA_INCLUDE_DIR;

std::vector<std::string> thrust_args(const Sources& sources) {
  return {sources.kernel,        "scale<float>", "-I" + sources.include_dir, "-I" + k_cuda_include + "/cccl",
          "-I" + k_cuda_include, "-arch=sm_90"};
}

bool have_thrust() {
  return std::filesystem::exists(k_cuda_include + "/cccl/thrust/iterator/detail/device_system_tag.h");
}

void set_extra(const Sources& sources, bool extra) {
  write_file(sources.include_dir + "/values/chosen/value.cuh",
             extra ? "#define EXTRA_KERNEL extern \"C\" __global__ void extra(int* y) { y[threadIdx.x] += 1; }\n"
                   : "#define EXTRA_KERNEL\n");
}

// What the program prints without the digests of the outputs' bytes: NVRTC gives CCCL's
// internal-linkage objects names with a part that differs from process to process
// (`_INTERNAL_..._k_cu_40a11718_1832...`), so two NVRTC runs of one compile differ in their bytes,
// never in result codes, sizes, log or lowered names.
std::string without_digests(const std::string& output) {
  static const std::regex digest("bytes=0,[0-9a-f]+");
  return std::regex_replace(output, digest, "bytes=0,?");
}

}  // namespace

TEST_CASE(
    "transparent nvrtc: (g) a kernel including CUB and Thrust, which names headers through macros, is a hit "
    "the second time with the first run's output") {
  if (!have_thrust()) JITCACHE_SKIP("no Thrust (CCCL) headers under " + k_cuda_include);
  Sources sources(k_thrust_kernel);
  set_extra(sources, false);
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  const ChildResult plain = run_program(thrust_args(sources), run_env(state.file("none.sock"), false));
  REQUIRE(plain.status == 0);
  REQUIRE_THAT(plain.output, Catch::Contains("lowered=0,_Z5scaleIfEvPT_"));
  const ChildResult first = run_program(thrust_args(sources), run_env(daemon.socket_path(), true));
  CHECK(without_digests(first.output) == without_digests(plain.output));
  REQUIRE(stat_value(client, "entries") == 1);  // stored: the compile was keyed, not passed through
  const auto hits = stat_value(client, "hits");
  const ChildResult second = run_program(thrust_args(sources), run_env(daemon.socket_path(), true));
  CHECK(second.status == 0);
  CHECK(second.output == first.output);  // the stored bytes, lowered names and log
  CHECK(stat_value(client, "hits") == hits + 1);
  CHECK(stat_value(client, "entries") == 1);
}

TEST_CASE(
    "transparent nvrtc: (g) a header reached only through a macro-named include that changes between runs is a miss "
    "with the new output, restored a hit") {
  if (!have_thrust()) JITCACHE_SKIP("no Thrust (CCCL) headers under " + k_cuda_include);
  Sources sources(k_thrust_kernel);
  set_extra(sources, false);
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  const auto cached = [&] { return run_program(thrust_args(sources), run_env(daemon.socket_path(), true)); };
  const auto plain = [&] { return run_program(thrust_args(sources), run_env(state.file("none.sock"), false)); };

  const ChildResult first_plain = plain();
  REQUIRE(first_plain.status == 0);
  const ChildResult first = cached();
  CHECK(without_digests(first.output) == without_digests(first_plain.output));
  REQUIRE(stat_value(client, "entries") == 1);

  set_extra(sources, true);
  const ChildResult changed_plain = plain();
  // The header's content reaches the output (its size).
  REQUIRE(without_digests(changed_plain.output) != without_digests(first_plain.output));
  const auto hits = stat_value(client, "hits");
  const ChildResult changed = cached();
  CHECK(without_digests(changed.output) == without_digests(changed_plain.output));
  CHECK(stat_value(client, "hits") == hits);
  CHECK(stat_value(client, "entries") == 2);

  set_extra(sources, false);
  const ChildResult restored = cached();
  CHECK(restored.output == first.output);
  CHECK(stat_value(client, "hits") == hits + 1);
  CHECK(stat_value(client, "entries") == 2);
}

// A header named by a macro that an option defines as `-D=NAME=value` (NVRTC 13.0 takes the `=`
// after -D as -D's own, as it does for -I=): the macro's default in the source names another file,
// so a scan that saw no definition from the option would record that one and miss the header read.
TEST_CASE(
    "transparent nvrtc: (g) a header named by a macro defined as -D=NAME=<file> that changes between runs is a miss "
    "with the new output") {
  Sources sources(
      "#ifndef VALUE_HEADER\n"
      "#define VALUE_HEADER \"default_value.cuh\"\n"
      "#endif\n"
      "#include VALUE_HEADER\n"
      "#include \"memory_header.cuh\"\n"
      "template <typename T> __global__ void scale(T* x) { x[threadIdx.x] *= (T)(CHOSEN_VALUE + MEMORY_VALUE); }\n");
  write_file(sources.include_dir + "/default_value.cuh", "#define CHOSEN_VALUE 5\n");
  write_file(sources.include_dir + "/chosen_value.cuh", "#define CHOSEN_VALUE 3\n");
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  const std::vector<EnvChange> memo = {{"JITCACHE_NVRTC_SCAN_MEMO_DIR", state.file("memo")}};
  const std::vector<std::string> args =
      jitcache::testing::nvrtc::compile_args(sources, {"-D=VALUE_HEADER=\"chosen_value.cuh\""});
  const auto cached = [&] { return run_program(args, run_env(daemon.socket_path(), true, memo)); };
  const auto plain = [&] { return run_program(args, run_env(state.file("none.sock"), false)); };

  const ChildResult first_plain = plain();
  REQUIRE(first_plain.status == 0);
  const ChildResult first = cached();
  CHECK(first.output == first_plain.output);
  REQUIRE(stat_value(client, "entries") == 1);  // keyed: the scan resolved the include

  write_file(sources.include_dir + "/chosen_value.cuh", "#define CHOSEN_VALUE 7\n");
  const ChildResult changed_plain = plain();
  REQUIRE(changed_plain.output != first_plain.output);  // the header reaches the output
  const auto hits = stat_value(client, "hits");
  const ChildResult changed = cached();
  CHECK(changed.output == changed_plain.output);
  CHECK(stat_value(client, "hits") == hits);
}

// A probe an option's macro makes (`-DPROBE=__has_include("file")`, `-DHAS(x)=__has_include(x)`):
// NVRTC 13.0 expands it where the source uses it, so a file created there between runs changes the
// output as a probe written in the source would.
TEST_CASE(
    "transparent nvrtc: (g) a file probed through a macro an option defines, created between runs, is a miss with the "
    "new output") {
  // Through a forwarder, `<DIR/probed.cuh>` is expanded as an argument: NVRTC probes sub/probed.cuh.
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"-DPROBE=__has_include(\"probed.cuh\")"}, "probed.cuh"},
      {{"-DHAS(x)=__has_include(x)", "-DPROBE=HAS(<probed.cuh>)"}, "probed.cuh"},
      {{"-DHAS(x)=__has_include(x)", "-DDIR=sub", "-DPROBE=HAS(<DIR/probed.cuh>)"}, "sub/probed.cuh"},
  };
  for (const auto& [options, probed] : cases) {
    INFO(options.back());
    Sources sources(
        "#include \"memory_header.cuh\"\n"
        "#if PROBE\n"
        "#define CHOSEN_VALUE 5\n"
        "#else\n"
        "#define CHOSEN_VALUE 3\n"
        "#endif\n"
        "template <typename T> __global__ void scale(T* x) { x[threadIdx.x] *= (T)(CHOSEN_VALUE + MEMORY_VALUE); }\n");
    TempDir state;
    DaemonProcess daemon(state);
    daemon.start();
    auto client = daemon.client();
    const std::vector<EnvChange> memo = {{"JITCACHE_NVRTC_SCAN_MEMO_DIR", state.file("memo")}};
    const std::vector<std::string> args = jitcache::testing::nvrtc::compile_args(sources, options);
    const auto cached = [&] { return run_program(args, run_env(daemon.socket_path(), true, memo)); };
    const auto plain = [&] { return run_program(args, run_env(state.file("none.sock"), false)); };

    const ChildResult first = cached();
    REQUIRE(first.status == 0);
    CHECK(stat_value(client, "entries") == 1);

    write_file(sources.include_dir + "/" + probed, "\n");
    const ChildResult created_plain = plain();
    REQUIRE(created_plain.output != first.output);  // the probe's answer reaches the output
    const ChildResult created = cached();
    CHECK(created.output == created_plain.output);
  }
}

// `-DSTAMP=__TIME__`: the output changes with the clock, as a __TIME__ in the source does, and a
// stored answer would give every later run the time of the first compile.
TEST_CASE("transparent nvrtc: (g) an option that defines a macro as __TIME__ makes the compile NVRTC's own") {
  Sources sources(
      "#include \"memory_header.cuh\"\n"
      "__device__ const char stamp[] = STAMP;\n"
      "template <typename T> __global__ void scale(T* x) { x[threadIdx.x] *= (T)(stamp[7] + MEMORY_VALUE); }\n");
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  const std::vector<EnvChange> memo = {{"JITCACHE_NVRTC_SCAN_MEMO_DIR", state.file("memo")}};
  const std::vector<std::string> args = jitcache::testing::nvrtc::compile_args(sources, {"-DSTAMP=__TIME__"});
  const ChildResult first = run_program(args, run_env(daemon.socket_path(), true, memo));
  REQUIRE(first.status == 0);
  const ChildResult second = run_program(args, run_env(daemon.socket_path(), true, memo));
  REQUIRE(second.status == 0);
  CHECK(stat_value(client, "entries") == 0);
  CHECK(stat_value(client, "hits") == 0);
}

// A macro NVRTC predefines inside a macro-named include: NVRTC's value (`__CUDACC_RTC__` is 1) is
// the one in force, not the fallback a text defines for other compilers, and no text holds it.
TEST_CASE(
    "transparent nvrtc: (g) a header named through a macro NVRTC predefines, changed between runs, is NVRTC's new "
    "output") {
  Sources sources(
      "#ifndef __CUDACC_RTC__\n"
      "#define __CUDACC_RTC__ offline\n"
      "#endif\n"
      "#define VALUE_HEADER <values/__CUDACC_RTC__/value.cuh>\n"
      "#include VALUE_HEADER\n"
      "#include \"memory_header.cuh\"\n"
      "template <typename T> __global__ void scale(T* x) { x[threadIdx.x] *= (T)(CHOSEN_VALUE + MEMORY_VALUE); }\n");
  write_file(sources.include_dir + "/values/1/value.cuh", "#define CHOSEN_VALUE 3\n");
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  const std::vector<EnvChange> memo = {{"JITCACHE_NVRTC_SCAN_MEMO_DIR", state.file("memo")}};
  const std::vector<std::string> args = jitcache::testing::nvrtc::compile_args(sources);
  const auto cached = [&] { return run_program(args, run_env(daemon.socket_path(), true, memo)); };
  const auto plain = [&] { return run_program(args, run_env(state.file("none.sock"), false)); };

  const ChildResult first = cached();
  REQUIRE(first.status == 0);
  write_file(sources.include_dir + "/values/1/value.cuh", "#define CHOSEN_VALUE 7\n");
  const ChildResult changed_plain = plain();
  REQUIRE(changed_plain.output != first.output);  // the header reaches the output
  const ChildResult changed = cached();
  CHECK(changed.output == changed_plain.output);
  CHECK(stat_value(client, "hits") == 0);
}
