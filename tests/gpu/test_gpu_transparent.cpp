// Transparent mode on the GPU (docs/transparent.md): programs that know nothing of jitcache, run
// under `jitcache run` against the real daemon and the real driver. A PTX-only runtime-API program
// built by nvcc, and what the GPU host's Python environment has (JAX, CuPy, cuda.bindings, NVIDIA
// Warp, PyTorch with Triton; each skipped, with the reason, when absent). Each checks its own
// results; the second run of each that makes the driver JIT is a hit in the daemon's counters and
// prints exactly what the first printed.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include <tests/gpu/cache_load.hpp>
#include <tests/gpu/gpu_paths.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache::testing;
using namespace jitcache::testing::gpu;

namespace {

std::string from_env(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// Where the bundle (scripts/gpu-bundle) or the build tree keeps what these tests run.
std::string program_dir() { return from_env("JITCACHE_GPU_PROGRAM_DIR", JITCACHE_GPU_PROGRAM_DIR); }
std::string python_dir() { return from_env("JITCACHE_GPU_PYTHON_DIR", JITCACHE_GPU_PYTHON_DIR); }
std::string preload_library() { return from_env("JITCACHE_PRELOAD_LIBRARY", JITCACHE_PRELOAD_LIBRARY_PATH); }
// The Python that has the frameworks: $JITCACHE_GPU_PYTHON, else python3 from PATH.
std::string python() { return from_env("JITCACHE_GPU_PYTHON", "python3"); }

ChildResult run_under_jitcache(const DaemonProcess& daemon, std::vector<std::string> command,
                               std::vector<EnvChange> env = {}) {
  std::vector<std::string> argv = {cli_executable(), "run", "--socket", daemon.socket_path(), "--quiet", "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  env.push_back({"JITCACHE_PRELOAD_LIBRARY", preload_library()});
  env.push_back({"JITCACHE_DISABLE", std::nullopt});
  return run_child(argv, env, std::chrono::seconds(280));
}

// Whether `module` imports in the GPU host's Python (the reason when not).
std::optional<std::string> missing_module(const std::string& module) {
  const ChildResult probe = run_child({"/usr/bin/env", python(), "-c", "import " + module},
                                      {{"LD_PRELOAD", std::nullopt}}, std::chrono::seconds(120));
  if (probe.status == 0) return std::nullopt;
  return "python " + python() + " cannot import " + module + " (exit " + std::to_string(probe.status) + ")";
}

// What a second run under jitcache run must show beside the first's output.
enum class SecondRun {
  runs,      // nothing about the cache (a framework that loads no module jitcache serves)
  hits,      // at least one hit, and nothing new stored
  only_hits  // and not one miss either: every compile or load of the first run is served
};

// Runs `command` twice under jitcache run; both must succeed and print the same thing, containing
// `expect`, and the second run must show `second`.
void run_twice(const std::vector<std::string>& command, const std::string& expect, SecondRun second_run,
               const std::vector<EnvChange>& env = {}) {
  TempDir state("jitcache-gpu");
  DaemonProcess daemon(state);
  daemon.start();
  const ChildResult first = run_under_jitcache(daemon, command, env);
  INFO("first run: " << first.output);
  REQUIRE(first.status == 0);
  CHECK_THAT(first.output, Catch::Contains(expect));
  const auto hits = daemon_stat(daemon, "hits");
  const auto misses = daemon_stat(daemon, "misses");
  const auto entries = daemon_stat(daemon, "entries");
  const ChildResult second = run_under_jitcache(daemon, command, env);
  INFO("second run: " << second.output);
  CHECK(second.status == 0);
  CHECK(second.output == first.output);
  if (second_run == SecondRun::runs) return;
  CHECK(entries >= 1);
  CHECK(daemon_stat(daemon, "hits") > hits);
  CHECK(daemon_stat(daemon, "entries") == entries);
  if (second_run == SecondRun::only_hits) CHECK(daemon_stat(daemon, "misses") == misses);
}

void run_python_twice(const std::string& module, const std::string& script, const std::string& expect,
                      SecondRun second_run, std::vector<EnvChange> env = {}) {
  if (auto missing = missing_module(module)) {
    JITCACHE_SKIP(*missing);
  }
  TempDir caches("jitcache-gpu-caches");
  // The frameworks' own caches start empty and stay out of the user's home.
  env.push_back({"CUPY_CACHE_DIR", caches.file("cupy")});
  env.push_back({"TRITON_CACHE_DIR", caches.file("triton")});
  env.push_back({"WARP_CACHE_PATH", caches.file("warp")});
  env.push_back({"CUDA_CACHE_DISABLE", std::string("1")});
  run_twice({"/usr/bin/env", python(), python_dir() + "/" + script}, expect, second_run, env);
}

}  // namespace

TEST_CASE(
    "gpu transparent: a PTX-only runtime-API program built by nvcc, unmodified, computes right under "
    "jitcache run, and its second run is a hit") {
  // The driver's own cache off, so the second run's hit is ours.
  for (const char* loading : {"LAZY", "EAGER"}) {
    INFO("CUDA_MODULE_LOADING=" << loading);
    run_twice({program_dir() + "/ptx_only_scale"}, "1048576 elements, 0 wrong", SecondRun::hits,
              {{"CUDA_CACHE_DISABLE", std::string("1")}, {"CUDA_MODULE_LOADING", std::string(loading)}});
  }
}

TEST_CASE(
    "gpu transparent: a cuLink* session of two PTX inputs links, runs right under jitcache run, and its second "
    "run is a hit with the same image") {
  const std::string data = corpus_dir();
  run_twice({program_dir() + "/link_scale", data + "/link/link_caller.ptx", data + "/link/link_callee.ptx", "culink"},
            "1048576 elements, 0 wrong", SecondRun::hits, {{"CUDA_CACHE_DISABLE", std::string("1")}});
}

TEST_CASE(
    "gpu transparent: an nvJitLink link of two PTX inputs runs right under jitcache run, and its second run is a "
    "hit with the same image") {
  const std::string data = corpus_dir();
  run_twice({program_dir() + "/link_scale", data + "/link/link_caller.ptx", data + "/link/link_callee.ptx",
             "nvjitlink"},
            "1048576 elements, 0 wrong", SecondRun::hits);
}

TEST_CASE(
    "gpu transparent: the driver's cuLink* gives the same image under other input names (why names are not keyed)") {
  const std::string data = corpus_dir();
  const ChildResult names =
      run_child({program_dir() + "/link_scale", data + "/link/link_caller.ptx", data + "/link/link_callee.ptx",
                 "names"},
                {{"LD_PRELOAD", std::nullopt}, {"CUDA_CACHE_DISABLE", std::string("1")}}, std::chrono::seconds(120));
  INFO(names.output);
  REQUIRE(names.status == 0);
  CHECK_THAT(names.output, Catch::Contains("names: same image; again: same image"));
  CHECK_THAT(names.output, Catch::Contains("renamed: same image"));
}

TEST_CASE("gpu transparent: jitcache warm on the PTX-only executable makes its very first run a hit") {
  TempDir state("jitcache-gpu");
  DaemonProcess daemon(state);
  daemon.start();
  const std::string program = program_dir() + "/ptx_only_scale";
  const ChildResult warmed =
      run_child({cli_executable(), "--socket", daemon.socket_path(), "warm", program, "--arch", "sm_90"},
                {{"JITCACHE_DISABLE", std::nullopt}}, std::chrono::seconds(280));
  INFO("warm: " << warmed.output);
  REQUIRE(warmed.status == 0);
  const auto entries = daemon_stat(daemon, "entries");
  CHECK(entries >= 1);
  const ChildResult first = run_under_jitcache(daemon, {program}, {{"CUDA_CACHE_DISABLE", std::string("1")}});
  INFO("first run: " << first.output);
  CHECK(first.status == 0);
  CHECK_THAT(first.output, Catch::Contains("1048576 elements, 0 wrong"));
  CHECK(daemon_stat(daemon, "hits") >= 1);
  CHECK(daemon_stat(daemon, "entries") == entries);
}

TEST_CASE("gpu transparent: JAX's built-in PTX modules hit on the second run, results right") {
  run_python_twice("jax", "jax_ops.py", "jax sum 4950.0", SecondRun::hits);
}

TEST_CASE("gpu transparent: a CuPy RawKernel compiled to PTX (CUPY_COMPILE_WITH_PTX=1) hits on the second run") {
  run_python_twice("cupy", "cupy_rawkernel_ptx.py", "cupy twice ok", SecondRun::hits,
                   {{"CUPY_COMPILE_WITH_PTX", std::string("1")}});
}

TEST_CASE("gpu transparent: a cuda.bindings program loading NVRTC PTX hits on the second run") {
  run_python_twice("cuda.bindings.nvrtc", "cuda_bindings_nvrtc.py", "cuda.bindings add_one ok", SecondRun::hits);
}

TEST_CASE("gpu transparent: an NVIDIA Warp kernel computes right and hits on the second run") {
  run_python_twice("warp", "warp_kernel.py", "warp triple ok", SecondRun::hits);
}

TEST_CASE("gpu transparent: PyTorch with a Triton kernel passes through, nothing breaks, results right") {
  run_python_twice("triton", "torch_triton.py", "triton add ok", SecondRun::runs);
}

// NVRTC compiles (docs/transparent.md "NVRTC compiles"): each framework's own kernel cache is kept
// in memory or off, so every start compiles with NVRTC and the second one is served by jitcache.
TEST_CASE("gpu transparent: CuPy's default mode (NVRTC to cubin) hits on the second run, results right") {
  run_python_twice("cupy", "cupy_nvrtc_default.py", "cupy nvrtc ok", SecondRun::hits,
                   {{"CUPY_CACHE_IN_MEMORY", std::string("1")}});
}

// CuPy's disk cache on and empty at each start (a new container, a wiped HOME): CuPy names each
// program by a path in a temporary directory of its own, which the key relative to the program's
// directory shares (docs/cache-key.md "The program's name"): every compile of the second run hits.
TEST_CASE("gpu transparent: CuPy's default mode with its disk cache empty at each start hits on the second run") {
  if (auto missing = missing_module("cupy")) {
    JITCACHE_SKIP(*missing);
  }
  run_twice({"/usr/bin/env", python(), python_dir() + "/cupy_nvrtc_default.py", "--fresh-cache"}, "cupy nvrtc ok",
            SecondRun::only_hits, {{"CUDA_CACHE_DISABLE", std::string("1")}});
}

TEST_CASE("gpu transparent: the PyTorch jiterator's NVRTC compile hits on the second run, results right") {
  run_python_twice("torch", "torch_jiterator.py", "jiterator ok", SecondRun::hits,
                   {{"USE_PYTORCH_KERNEL_CACHE", std::string("0")}});
}

TEST_CASE("gpu transparent: a cuda.core Program compiled with NVRTC hits on the second run, results right") {
  run_python_twice("cuda.core", "cuda_core_program.py", "cuda.core program ok", SecondRun::hits);
}
