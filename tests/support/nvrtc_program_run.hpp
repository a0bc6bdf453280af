// The NVRTC program (g) (tests/programs/nvrtc_compile.c) and the sources it compiles, for the tests of
// NVRTC compiles under libjitcache-preload.so: a template kernel with a name expression, an
// in-memory header and a header under an -I directory. A test target that includes this defines
// JITCACHE_NVRTC_PROGRAM and JITCACHE_NVRTC_LIBRARY (tests/CMakeLists.txt).
// Thread safety: test helpers, one thread.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::testing::nvrtc {

inline constexpr const char* k_kernel =
    "#include \"memory_header.cuh\"\n"
    "#include <scale_value.cuh>\n"
    "template <typename T> __global__ void scale(T* x) { x[threadIdx.x] *= (T)(HEADER_VALUE + MEMORY_VALUE); }\n";

inline constexpr const char* k_broken_kernel =
    "#include <scale_value.cuh>\n"
    "template <typename T> __global__ void scale(T* x) { x[threadIdx.x] = undeclared_name; }\n";

// A kernel, its -I directory and its header, in a directory of their own.
struct Sources {
  TempDir dir;
  std::string kernel = dir.file("kernel.cu");
  std::string include_dir = dir.file("include");
  std::string header = dir.file("include/scale_value.cuh");
  explicit Sources(const char* text = k_kernel, int value = 3) {
    write_file(kernel, text);
    set_header(value);
  }
  void set_header(int value) { write_file(header, "#define HEADER_VALUE " + std::to_string(value) + "\n"); }
};

inline ChildResult run_program(const std::vector<std::string>& args, std::vector<EnvChange> env) {
  env.push_back({"NVRTC_LIBRARY", std::string(JITCACHE_NVRTC_LIBRARY)});
  std::vector<std::string> argv = {JITCACHE_NVRTC_PROGRAM};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_child(argv, env, std::chrono::seconds(120));
}

inline std::vector<std::string> compile_args(const Sources& sources, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {sources.kernel, "scale<float>", "-I" + sources.include_dir, "-arch=sm_90"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace jitcache::testing::nvrtc
