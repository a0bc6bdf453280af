// The fake dynamic cudart (tests/fakes/fake_cudart) reaches the driver as dynamic cudart does — it
// opens "libcuda.so.1" and asks its cuGetProcAddress_v2 — so cudaGetDriverEntryPoint{,ByVersion}
// hand out what the (fake) driver resolves, with the version, flags and status semantics
// cuda_runtime_api.h gives them.
#include <catch2/catch.hpp>

#include <tests/support/test_skip.hpp>

#if defined(JITCACHE_FAKE_CUDA_DRIVER) && defined(JITCACHE_FAKE_CUDART)

#include <tests/support/fake_cuda_handle.hpp>

#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace {

using namespace jitcache::testing::fake_cuda;

using GetDriverEntryPoint = cudaError_t (*)(const char*, void**, unsigned long long, cudaDriverEntryPointQueryResult*);
using GetDriverEntryPointByVersion = cudaError_t (*)(const char*, void**, unsigned int, unsigned long long,
                                                     cudaDriverEntryPointQueryResult*);
using GetVersion = cudaError_t (*)(int*);
using ErrorText = const char* (*)(cudaError_t);

void* cudart_handle() {
  static void* handle = dlopen(JITCACHE_FAKE_CUDART, RTLD_NOW | RTLD_LOCAL);
  INFO((handle == nullptr ? dlerror() : ""));
  REQUIRE(handle != nullptr);
  return handle;
}

template <class F>
F cudart(const char* name) {
  INFO(name);
  void* found = dlsym(cudart_handle(), name);
  REQUIRE(found != nullptr);
  return reinterpret_cast<F>(found);
}

struct Answer {
  cudaError_t error = cudaErrorUnknown;
  void* function = reinterpret_cast<void*>(1);
  cudaDriverEntryPointQueryResult status = static_cast<cudaDriverEntryPointQueryResult>(-1);
};

Answer ask(const char* export_name, const char* symbol, unsigned long long flags) {
  Answer answer;
  answer.error = cudart<GetDriverEntryPoint>(export_name)(symbol, &answer.function, flags, &answer.status);
  return answer;
}

Answer ask_by_version(const char* symbol, unsigned version, unsigned long long flags = cudaEnableDefault) {
  Answer answer;
  answer.error = cudart<GetDriverEntryPointByVersion>(
      "cudaGetDriverEntryPointByVersion")(symbol, &answer.function, version, flags, &answer.status);
  return answer;
}

// Runs `body` in a child process and returns its exit status (or 128 + the signal).
template <class Body>
int in_child(Body body) {
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) _exit(body());
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("fake cudart: it is libcudart.so.13, its file libcudart.so.13.999, its symbols in version libcudart.so.13",
          "[fake_cuda]") {
  CHECK(std::filesystem::path(JITCACHE_FAKE_CUDART).filename() == "libcudart.so.13");
  CHECK(std::filesystem::canonical(JITCACHE_FAKE_CUDART).filename() == "libcudart.so.13.999");
  CHECK(std::filesystem::path(JITCACHE_FAKE_CUDART).parent_path() == JITCACHE_FAKE_CUDART_DIR);
  for (const char* name : {"cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion",
                           "cudaGetDriverEntryPoint_ptsz", "cudaGetDriverEntryPointByVersion_ptsz",
                           "cudaRuntimeGetVersion", "cudaDriverGetVersion", "cudaGetErrorName", "cudaGetErrorString"}) {
    INFO(name);
    CHECK(dlvsym(cudart_handle(), name, "libcudart.so.13") != nullptr);
  }
}

TEST_CASE("fake cudart: cudaGetDriverEntryPoint hands out what the driver's cuGetProcAddress_v2 resolves",
          "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const Answer load = ask("cudaGetDriverEntryPoint", "cuModuleLoadData", cudaEnableDefault);
  CHECK(load.error == cudaSuccess);
  CHECK(load.status == cudaDriverEntryPointSuccess);
  CHECK(load.function == fake.symbol("cuModuleLoadData"));
  // At the runtime's version (13000) the newest ABI of each entry point.
  CHECK(ask("cudaGetDriverEntryPoint", "cuLinkCreate", cudaEnableDefault).function == fake.symbol("cuLinkCreate_v2"));
  CHECK(ask("cudaGetDriverEntryPoint", "cuGetProcAddress", cudaEnableDefault).function ==
        fake.symbol("cuGetProcAddress_v2"));
  CHECK(ask("cudaGetDriverEntryPoint", "cuLibraryLoadData", cudaEnableDefault).function ==
        fake.symbol("cuLibraryLoadData"));
  // The route is the driver's resolver: what it counts and hides, cudart sees.
  CHECK(fake.counters().get_proc_address_calls >= 4);
  fake.set_hidden("cuModuleLoadData");
  const Answer hidden = ask("cudaGetDriverEntryPoint", "cuModuleLoadData", cudaEnableDefault);
  CHECK(hidden.error == cudaSuccess);
  CHECK(hidden.status == cudaDriverEntryPointSymbolNotFound);
  CHECK(hidden.function == nullptr);
  const Answer unknown = ask("cudaGetDriverEntryPoint", "cuFoo", cudaEnableDefault);
  CHECK(unknown.error == cudaSuccess);
  CHECK(unknown.status == cudaDriverEntryPointSymbolNotFound);
  CHECK(unknown.function == nullptr);
  void* function = nullptr;
  CHECK(cudart<GetDriverEntryPoint>("cudaGetDriverEntryPoint")(nullptr, &function, 0, nullptr) ==
        cudaErrorInvalidValue);
  CHECK(cudart<GetDriverEntryPoint>("cudaGetDriverEntryPoint")("cuModuleLoadData", &function, 0, nullptr) ==
        cudaSuccess);
  CHECK(function == nullptr);  // still hidden; the status pointer may be NULL
}

TEST_CASE("fake cudart: cudaGetDriverEntryPointByVersion picks the ABI for the version asked", "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  CHECK(ask_by_version("cuLinkCreate", 5050).function == fake.symbol("cuLinkCreate"));
  CHECK(ask_by_version("cuLinkCreate", 6050).function == fake.symbol("cuLinkCreate_v2"));
  CHECK(ask_by_version("cuGetProcAddress", 11030).function == fake.symbol("cuGetProcAddress"));
  const Answer too_old = ask_by_version("cuLibraryLoadData", 11000);
  CHECK(too_old.error == cudaSuccess);
  CHECK(too_old.status == cudaDriverEntryPointVersionNotSufficent);
  CHECK(too_old.function == nullptr);
  CHECK(ask_by_version("cuModuleLoadData", 13010).error == cudaErrorInvalidValue);
}

TEST_CASE("fake cudart: the _ptsz forms ask for per-thread-stream ABIs unless told otherwise", "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  CHECK(ask("cudaGetDriverEntryPoint_ptsz", "cuLaunchKernel", cudaEnableDefault).function ==
        fake.symbol("cuLaunchKernel_ptsz"));
  CHECK(ask("cudaGetDriverEntryPoint_ptsz", "cuLaunchKernel", cudaEnableLegacyStream).function ==
        fake.symbol("cuLaunchKernel"));
  CHECK(ask("cudaGetDriverEntryPoint", "cuLaunchKernel", cudaEnableDefault).function == fake.symbol("cuLaunchKernel"));
  CHECK(ask("cudaGetDriverEntryPoint", "cuLaunchKernel", cudaEnablePerThreadDefaultStream).function ==
        fake.symbol("cuLaunchKernel_ptsz"));
  Answer answer;
  answer.error = cudart<GetDriverEntryPointByVersion>(
      "cudaGetDriverEntryPointByVersion_ptsz")("cuLaunchKernel", &answer.function, 13000, cudaEnableDefault,
                                               &answer.status);
  CHECK(answer.error == cudaSuccess);
  CHECK(answer.function == fake.symbol("cuLaunchKernel_ptsz"));
}

TEST_CASE("fake cudart: runtime 13000, the driver's version as the driver says, and an older major is refused",
          "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  int version = 0;
  REQUIRE(cudart<GetVersion>("cudaRuntimeGetVersion")(&version) == cudaSuccess);
  CHECK(version == 13000);
  REQUIRE(cudart<GetVersion>("cudaDriverGetVersion")(&version) == cudaSuccess);
  CHECK(version == 13000);
  REQUIRE(fake.set_device(0, 12080) == 0);
  REQUIRE(cudart<GetVersion>("cudaDriverGetVersion")(&version) == cudaSuccess);
  CHECK(version == 12080);
  CHECK(ask("cudaGetDriverEntryPoint", "cuModuleLoadData", cudaEnableDefault).error == cudaErrorInsufficientDriver);
  CHECK(ask_by_version("cuModuleLoadData", 12000).function == fake.symbol("cuModuleLoadData"));
  CHECK(cudart<GetVersion>("cudaDriverGetVersion")(nullptr) == cudaErrorInvalidValue);
  CHECK(cudart<GetVersion>("cudaRuntimeGetVersion")(nullptr) == cudaErrorInvalidValue);
}

TEST_CASE("fake cudart: error names and strings read as cudart's", "[fake_cuda]") {
  const auto name = cudart<ErrorText>("cudaGetErrorName");
  const auto text = cudart<ErrorText>("cudaGetErrorString");
  CHECK(std::string(name(cudaSuccess)) == "cudaSuccess");
  CHECK(std::string(text(cudaSuccess)) == "no error");
  CHECK(std::string(name(cudaErrorInsufficientDriver)) == "cudaErrorInsufficientDriver");
  CHECK(std::string(text(cudaErrorInsufficientDriver)) ==
        "CUDA driver version is insufficient for CUDA runtime version");
  CHECK(std::string(text(cudaErrorInvalidValue)) == "invalid argument");
  CHECK(std::string(text(static_cast<cudaError_t>(12345))) == "unrecognized error code");
}

TEST_CASE("fake cudart: without a libcuda.so.1 to open, entry points are cudaErrorInsufficientDriver and the driver 0",
          "[fake_cuda]") {
  // The check needs a process that has not loaded a libcuda.so.1 and cannot find one; where this one
  // has (the whole binary run at once) or the system has one (a GPU machine), there is nothing to see.
  if (dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) != nullptr) {
    JITCACHE_SKIP("this process has already loaded a libcuda.so.1");
  }
  if (in_child([] { return dlopen("libcuda.so.1", RTLD_LAZY) != nullptr ? 1 : 0; }) != 0) {
    JITCACHE_SKIP("the dynamic linker finds a libcuda.so.1 on this machine");
  }
  const int outcome = in_child([] {
    void* handle = dlopen(JITCACHE_FAKE_CUDART, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return 10;
    const auto get = reinterpret_cast<GetDriverEntryPoint>(dlsym(handle, "cudaGetDriverEntryPoint"));
    const auto driver_version = reinterpret_cast<GetVersion>(dlsym(handle, "cudaDriverGetVersion"));
    void* function = reinterpret_cast<void*>(1);
    if (get("cuModuleLoadData", &function, cudaEnableDefault, nullptr) != cudaErrorInsufficientDriver) return 11;
    if (function != nullptr) return 12;
    int version = -1;
    if (driver_version(&version) != cudaSuccess || version != 0) return 13;
    return 0;
  });
  CHECK(outcome == 0);
}

#else

TEST_CASE("fake cudart: skipped where the fakes are not built", "[fake_cuda]") {
  JITCACHE_MARK_SKIPPED("the fake CUDA driver and cudart need the CUDA toolkit and nvJitLink at build time");
}

#endif
