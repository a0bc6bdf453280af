// The fake CUDA driver (tests/fakes/fake_cuda) behaves as the driver notes say the real one does, so
// that client tests built on it test something real: it is opened by path with dlopen and every entry
// point is resolved through cuGetProcAddress_v2, as libjitcache does. Images are real: PTX from
// tests/data, cubins from the fake's own cuLink* and, for architectures the fake device cannot run,
// from nvJitLink directly. Damaged images sit right before an unreadable page, so a fake that read
// past them would crash the test instead of answering.
#include <tests/fakes/fake_cuda/fake_cuda_control.h>

#include <catch2/catch.hpp>

#include <tests/support/test_skip.hpp>

#if defined(JITCACHE_FAKE_CUDA_DRIVER)

#include <tests/support/fake_cuda_images.hpp>

#include <proto/cu_result_names.hpp>

#include <cuda.h>
#include <cudaTypedefs.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace jitcache::testing::fake_cuda;

// ---- the fake, opened and resolved as the client does it ---------------------------------------

struct Driver {
  void* handle = nullptr;
  PFN_cuGetProcAddress_v12000 get_proc_address = nullptr;
  PFN_cuDriverGetVersion_v2020 driver_get_version = nullptr;
  PFN_cuGetErrorName_v6000 get_error_name = nullptr;
  PFN_cuGetErrorString_v6000 get_error_string = nullptr;
  PFN_cuCtxGetDevice_v2000 ctx_get_device = nullptr;
  PFN_cuDeviceGetAttribute_v2000 device_get_attribute = nullptr;
  PFN_cuModuleLoadData_v2000 module_load_data = nullptr;
  PFN_cuModuleLoadDataEx_v2010 module_load_data_ex = nullptr;
  PFN_cuModuleUnload_v2000 module_unload = nullptr;
  PFN_cuModuleGetFunction_v2000 module_get_function = nullptr;
  PFN_cuLinkCreate_v6050 link_create = nullptr;
  PFN_cuLinkAddData_v6050 link_add_data = nullptr;
  PFN_cuLinkComplete_v5050 link_complete = nullptr;
  PFN_cuLinkDestroy_v5050 link_destroy = nullptr;

  decltype(&fake_cuda_set_failure) set_failure = nullptr;
  decltype(&fake_cuda_clear_failures) clear_failures = nullptr;
  decltype(&fake_cuda_get_counters) get_counters = nullptr;
  decltype(&fake_cuda_reset_counters) reset_counters = nullptr;
  decltype(&fake_cuda_set_device) set_device = nullptr;
  decltype(&fake_cuda_set_hidden) set_hidden = nullptr;
  decltype(&fake_cuda_set_crash_on_truncated) set_crash_on_truncated = nullptr;
  decltype(&fake_cuda_reload_environment) reload_environment = nullptr;

  fake_cuda_counters counters() const {
    fake_cuda_counters snapshot{};
    get_counters(&snapshot);
    return snapshot;
  }
};

template <class Pfn>
void resolve(const Driver& driver, Pfn& out, const char* name, int version) {
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  INFO(name);
  REQUIRE(driver.get_proc_address(name, &pfn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_SUCCESS);
  REQUIRE(status == CU_GET_PROC_ADDRESS_SUCCESS);
  REQUIRE(pfn != nullptr);
  out = reinterpret_cast<Pfn>(pfn);
}

template <class F>
void control(void* handle, F& out, const char* name) {
  INFO(name);
  out = reinterpret_cast<F>(dlsym(handle, name));
  REQUIRE(out != nullptr);
}

// The fake's state is per process: every test starts from the defaults (CC 9.0, driver 13000).
const Driver& fake() {
  static Driver driver;
  if (driver.handle == nullptr) {
    void* handle = dlopen(JITCACHE_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_LOCAL);
    INFO((handle == nullptr ? dlerror() : ""));
    REQUIRE(handle != nullptr);
    Driver resolved;
    resolved.handle = handle;
    resolved.get_proc_address = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(handle, "cuGetProcAddress_v2"));
    REQUIRE(resolved.get_proc_address != nullptr);
    resolve(resolved, resolved.driver_get_version, "cuDriverGetVersion", 2020);
    resolve(resolved, resolved.get_error_name, "cuGetErrorName", 6000);
    resolve(resolved, resolved.get_error_string, "cuGetErrorString", 6000);
    resolve(resolved, resolved.ctx_get_device, "cuCtxGetDevice", 2000);
    resolve(resolved, resolved.device_get_attribute, "cuDeviceGetAttribute", 2000);
    resolve(resolved, resolved.module_load_data, "cuModuleLoadData", 2000);
    resolve(resolved, resolved.module_load_data_ex, "cuModuleLoadDataEx", 2010);
    resolve(resolved, resolved.module_unload, "cuModuleUnload", 2000);
    resolve(resolved, resolved.module_get_function, "cuModuleGetFunction", 2000);
    resolve(resolved, resolved.link_create, "cuLinkCreate", 6050);
    resolve(resolved, resolved.link_add_data, "cuLinkAddData", 6050);
    resolve(resolved, resolved.link_complete, "cuLinkComplete", 5050);
    resolve(resolved, resolved.link_destroy, "cuLinkDestroy", 5050);
    control(handle, resolved.set_failure, "fake_cuda_set_failure");
    control(handle, resolved.clear_failures, "fake_cuda_clear_failures");
    control(handle, resolved.get_counters, "fake_cuda_get_counters");
    control(handle, resolved.reset_counters, "fake_cuda_reset_counters");
    control(handle, resolved.set_device, "fake_cuda_set_device");
    control(handle, resolved.set_hidden, "fake_cuda_set_hidden");
    control(handle, resolved.set_crash_on_truncated, "fake_cuda_set_crash_on_truncated");
    control(handle, resolved.reload_environment, "fake_cuda_reload_environment");
    driver = resolved;
  }
  driver.clear_failures();
  driver.set_hidden(nullptr);
  driver.set_crash_on_truncated(0);
  REQUIRE(driver.set_device(90, 13000) == 0);
  driver.reset_counters();
  return driver;
}

// ---- driver calls --------------------------------------------------------------------------------

struct LoadResult {
  CUresult code = CUDA_SUCCESS;
  CUmodule module = nullptr;
  std::string error_log;
  std::size_t error_log_size = 0;  // the OUT value of CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
  float wall_ms = -1.0f;
};

LoadResult load_ex(const Driver& driver, const void* image, std::vector<CUjit_option> options = {},
                   std::vector<void*> values = {}, unsigned log_capacity = 8192) {
  std::vector<char> log(log_capacity + 1, 'x');
  options.insert(options.end(), {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME});
  values.insert(values.end(), {log.data(), reinterpret_cast<void*>(std::uintptr_t{log_capacity}), nullptr});
  LoadResult result;
  result.code = driver.module_load_data_ex(&result.module, image, static_cast<unsigned>(options.size()), options.data(),
                                           values.data());
  const std::size_t n = values.size();
  result.error_log_size = reinterpret_cast<std::uintptr_t>(values[n - 2]);
  result.error_log.assign(log.data(), strnlen(log.data(), log.size()));
  result.wall_ms = std::bit_cast<float>(static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(values[n - 1])));
  return result;
}

void unload(const Driver& driver, CUmodule module) { REQUIRE(driver.module_unload(module) == CUDA_SUCCESS); }

// cuLink* on one PTX with the given options; the cubin is copied out before cuLinkDestroy.
struct LinkResult {
  CUresult create = CUDA_SUCCESS;
  CUresult add = CUDA_SUCCESS;
  CUresult complete = CUDA_SUCCESS;
  Bytes cubin;
  std::string error_log;
};

LinkResult link_ptx(const Driver& driver, const std::string& ptx, std::vector<CUjit_option> options = {},
                    std::vector<void*> values = {}) {
  std::vector<char> log(4096, '\0');
  options.insert(options.end(), {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES});
  values.insert(values.end(), {log.data(), reinterpret_cast<void*>(std::uintptr_t{4096})});
  LinkResult result;
  CUlinkState state = nullptr;
  result.create = driver.link_create(static_cast<unsigned>(options.size()), options.data(), values.data(), &state);
  if (result.create != CUDA_SUCCESS) return result;
  result.add = driver.link_add_data(state, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()), ptx.size() + 1,
                                    "kernel.ptx", 0, nullptr, nullptr);
  if (result.add == CUDA_SUCCESS) {
    void* cubin = nullptr;
    std::size_t size = 0;
    result.complete = driver.link_complete(state, &cubin, &size);
    if (result.complete == CUDA_SUCCESS) result.cubin = to_bytes(cubin, size);
  }
  result.error_log = log.data();
  REQUIRE(driver.link_destroy(state) == CUDA_SUCCESS);
  return result;
}

Bytes linked_cubin(const Driver& driver, const std::string& ptx, std::vector<CUjit_option> options = {},
                   std::vector<void*> values = {}) {
  const LinkResult linked = link_ptx(driver, ptx, std::move(options), std::move(values));
  INFO(linked.error_log);
  REQUIRE(linked.create == CUDA_SUCCESS);
  REQUIRE(linked.add == CUDA_SUCCESS);
  REQUIRE(linked.complete == CUDA_SUCCESS);
  return linked.cubin;
}

std::string printable(const Bytes& bytes) {
  std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  for (char& c : text) c = c == '\0' ? ' ' : c;
  return text;
}

void* value(std::uintptr_t v) { return reinterpret_cast<void*>(v); }

}  // namespace

TEST_CASE("fake cuda driver: its real file is libcuda.so.999.0.1 behind the libcuda.so.1 name", "[fake_cuda]") {
  const Driver& driver = fake();
  const auto real = std::filesystem::canonical(JITCACHE_FAKE_CUDA_DRIVER);
  CHECK(real.filename() == "libcuda.so.999.0.1");
  Dl_info info{};
  REQUIRE(dladdr(reinterpret_cast<void*>(driver.get_proc_address), &info) != 0);
  CHECK(std::filesystem::canonical(info.dli_fname) == real);
  int version = 0;
  REQUIRE(driver.driver_get_version(&version) == CUDA_SUCCESS);
  CHECK(version == 13000);
}

TEST_CASE("fake cuda driver: PTX from small_kernel.ptx is JIT-compiled into a module where reduce_partial resolves",
          "[fake_cuda]") {
  const Driver& driver = fake();
  const std::string ptx = small_kernel_ptx();
  CUmodule module = nullptr;
  REQUIRE(driver.module_load_data(&module, ptx.c_str()) == CUDA_SUCCESS);
  REQUIRE(module != nullptr);
  CUfunction function = nullptr;
  CHECK(driver.module_get_function(&function, module, "reduce_partial") == CUDA_SUCCESS);
  CHECK(function != nullptr);
  CHECK(driver.module_get_function(&function, module, "no_such_kernel") == CUDA_ERROR_NOT_FOUND);
  auto counters = driver.counters();
  CHECK(counters.ptx_jit_compiles == 1);
  CHECK(counters.modules_alive == 1);
  CHECK(counters.cubin_loads_ok == 0);
  unload(driver, module);
  CHECK(driver.counters().modules_alive == 0);
  CHECK(driver.module_unload(module) == CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("fake cuda driver: the cubin cuLink* produces for the context's arch (sm_90a) loads as a module",
          "[fake_cuda]") {
  const Driver& driver = fake();
  float wall_bits_as_float = -1.0f;
  std::vector<CUjit_option> options{CU_JIT_WALL_TIME};
  std::vector<void*> values{nullptr};
  std::vector<char> log(4096, '\0');
  options.insert(options.end(), {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES});
  values.insert(values.end(), {log.data(), value(log.size())});
  CUlinkState state = nullptr;
  REQUIRE(driver.link_create(3, options.data(), values.data(), &state) == CUDA_SUCCESS);
  const std::string ptx = small_kernel_ptx();
  REQUIRE(driver.link_add_data(state, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()), ptx.size() + 1, "k.ptx", 0,
                               nullptr, nullptr) == CUDA_SUCCESS);
  void* cubin = nullptr;
  std::size_t size = 0;
  REQUIRE(driver.link_complete(state, &cubin, &size) == CUDA_SUCCESS);
  REQUIRE(size > 64);
  CHECK(std::memcmp(cubin,
                    "\x7f"
                    "ELF",
                    4) == 0);
  wall_bits_as_float = std::bit_cast<float>(static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(values[0])));
  CHECK(wall_bits_as_float > 0.0f);
  CHECK(reinterpret_cast<std::uintptr_t>(values[2]) == 0);  // no error text was written

  const Bytes copy = to_bytes(cubin, size);
  CHECK(printable(copy).find("-arch sm_90a") != std::string::npos);
  CUmodule module = nullptr;
  REQUIRE(driver.module_load_data(&module, cubin) == CUDA_SUCCESS);
  CUfunction function = nullptr;
  CHECK(driver.module_get_function(&function, module, "reduce_partial") == CUDA_SUCCESS);
  unload(driver, module);
  REQUIRE(driver.link_destroy(state) == CUDA_SUCCESS);
  CHECK(driver.link_destroy(state) == CUDA_ERROR_INVALID_HANDLE);

  const auto counters = driver.counters();
  CHECK(counters.link_compiles == 1);
  CHECK(counters.link_completes == 1);
  CHECK(counters.cubin_loads_ok == 1);
  CHECK(counters.ptx_jit_compiles == 0);
}

TEST_CASE("fake cuda driver: JIT options reach the compiler and show in the cubin's tkinfo", "[fake_cuda]") {
  const Driver& driver = fake();
  const Bytes cubin =
      linked_cubin(driver, small_kernel_ptx(), {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_MAX_REGISTERS, CU_JIT_TARGET},
                   {value(1), value(32), value(CU_TARGET_COMPUTE_90)});
  const std::string text = printable(cubin);
  INFO(text);
  CHECK(text.find("-O 1") != std::string::npos);
  CHECK(text.find("-maxrregcount 32") != std::string::npos);
  CHECK(text.find("-arch sm_90 ") != std::string::npos);
}

TEST_CASE("fake cuda driver: a cubin for an arch the device cannot run is refused with 209", "[fake_cuda]") {
  const Driver& driver = fake();

  SECTION("sm_80 from cuLink with CU_JIT_TARGET=compute_80 links on CC 9.0, but loads only on CC 8.x") {
    const Bytes sm80 = linked_cubin(driver, ptx_for_target("sm_80"), {CU_JIT_TARGET}, {value(CU_TARGET_COMPUTE_80)});
    CHECK(load_ex(driver, sm80.data()).code == CUDA_ERROR_NO_BINARY_FOR_GPU);
    REQUIRE(driver.set_device(86, 0) == 0);
    const LoadResult on_86 = load_ex(driver, sm80.data());
    CHECK(on_86.code == CUDA_SUCCESS);
    if (on_86.code == CUDA_SUCCESS) unload(driver, on_86.module);
    const auto counters = driver.counters();
    CHECK(counters.cubin_loads_failed == 1);
    CHECK(counters.cubin_loads_ok == 1);
  }
  SECTION("sm_100 from nvJitLink does not run on CC 9.0 but does on CC 10.0") {
    const Bytes sm100 = nvjitlink_cubin(ptx_for_target("sm_100"), "sm_100");
    const LoadResult on_90 = load_ex(driver, sm100.data());
    CHECK(on_90.code == CUDA_ERROR_NO_BINARY_FOR_GPU);
    CHECK(std::string(driver.counters().last_error_log).find("sm_100") != std::string::npos);
    REQUIRE(driver.set_device(100, 0) == 0);
    const LoadResult on_100 = load_ex(driver, sm100.data());
    CHECK(on_100.code == CUDA_SUCCESS);
    if (on_100.code == CUDA_SUCCESS) unload(driver, on_100.module);
  }
  SECTION("sm_90a runs only on exactly CC 9.0, sm_90 on later 9.x too") {
    const Bytes sm90a = nvjitlink_cubin(small_kernel_ptx(), "sm_90a");
    const Bytes sm90 = nvjitlink_cubin(small_kernel_ptx(), "sm_90");
    const LoadResult a_on_90 = load_ex(driver, sm90a.data());
    CHECK(a_on_90.code == CUDA_SUCCESS);
    if (a_on_90.code == CUDA_SUCCESS) unload(driver, a_on_90.module);
    REQUIRE(driver.set_device(92, 0) == 0);
    CHECK(load_ex(driver, sm90a.data()).code == CUDA_ERROR_NO_BINARY_FOR_GPU);
    const LoadResult plain_on_92 = load_ex(driver, sm90.data());
    CHECK(plain_on_92.code == CUDA_SUCCESS);
    if (plain_on_92.code == CUDA_SUCCESS) unload(driver, plain_on_92.module);
  }
}

TEST_CASE("fake cuda driver: a truncated cubin is refused with 200 at every length, never read past its end",
          "[fake_cuda]") {
  const Driver& driver = fake();
  const Bytes cubin = linked_cubin(driver, small_kernel_ptx());
  driver.reset_counters();
  int refused = 0;
  for (std::size_t length = 1; length < cubin.size(); length += length < 128 ? 1 : 61) {
    GuardedImage image(std::span(cubin.data(), length));
    const LoadResult result = load_ex(driver, image.data());
    INFO("truncated to " << length << " of " << cubin.size() << " bytes");
    CHECK(result.code == CUDA_ERROR_INVALID_IMAGE);
    refused += result.code == CUDA_ERROR_INVALID_IMAGE ? 1 : 0;
  }
  CHECK(refused > 0);
  // Lengths below 4 do not carry the whole ELF magic and read as (unterminated) text, not as cubins.
  CHECK(driver.counters().cubin_loads_failed == static_cast<unsigned long long>(refused - 3));
  CHECK(driver.counters().modules_alive == 0);

  GuardedImage whole(cubin);
  const LoadResult loaded = load_ex(driver, whole.data());
  CHECK(loaded.code == CUDA_SUCCESS);
  if (loaded.code == CUDA_SUCCESS) unload(driver, loaded.module);
}

TEST_CASE("fake cuda driver: FAKE_CUDA_CRASH_ON_TRUNCATED makes a malformed cubin abort the process", "[fake_cuda]") {
  const Driver& driver = fake();
  const Bytes cubin = linked_cubin(driver, small_kernel_ptx());
  GuardedImage truncated(std::span(cubin.data(), cubin.size() / 2));
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child must die of the fake's abort(), not of Catch2's handler or a test assertion.
    std::signal(SIGABRT, SIG_DFL);
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    const int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, STDERR_FILENO);
    driver.set_crash_on_truncated(1);
    CUmodule module = nullptr;
    driver.module_load_data(&module, truncated.data());
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);

  // Without the flag the same image is an error code.
  CUmodule module = nullptr;
  CHECK(driver.module_load_data(&module, truncated.data()) == CUDA_ERROR_INVALID_IMAGE);
}

TEST_CASE("fake cuda driver: PTX with .version 9.9 is refused with 222 before any compile", "[fake_cuda]") {
  const Driver& driver = fake();
  const std::string ptx = with_line_replaced(small_kernel_ptx(), ".version 9.0", ".version 9.9");
  const LoadResult result = load_ex(driver, ptx.c_str());
  CHECK(result.code == CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  CHECK(result.error_log.find("Unsupported .version 9.9; current version is '9.0'") != std::string::npos);
  CHECK(driver.counters().ptx_jit_compiles == 0);

  const LinkResult linked = link_ptx(driver, ptx);
  CHECK(linked.add == CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  CHECK(linked.error_log.find("Unsupported .version 9.9") != std::string::npos);
  CHECK(driver.counters().link_compiles == 0);
}

TEST_CASE("fake cuda driver: the JIT's newest PTX ISA follows the driver version", "[fake_cuda]") {
  const Driver& driver = fake();
  REQUIRE(driver.set_device(0, 12080) == 0);
  const LoadResult result = load_ex(driver, small_kernel_ptx().c_str());
  CHECK(result.code == CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  CHECK(result.error_log.find("current version is '8.7'") != std::string::npos);
  const std::string isa87 = with_line_replaced(small_kernel_ptx(), ".version 9.0", ".version 8.7");
  const LoadResult older = load_ex(driver, isa87.c_str());
  CHECK(older.code == CUDA_SUCCESS);
  if (older.code == CUDA_SUCCESS) unload(driver, older.module);
}

TEST_CASE("fake cuda driver: garbage PTX is refused with 218 and the compiler's log in the caller's buffer",
          "[fake_cuda]") {
  const Driver& driver = fake();
  const std::string ptx = ".version 9.0\n.target sm_90\n.address_size 64\n\nthis is not an instruction;\n";
  const LoadResult result = load_ex(driver, ptx.c_str());
  CHECK(result.code == CUDA_ERROR_INVALID_PTX);
  INFO(result.error_log);
  CHECK_FALSE(result.error_log.empty());
  CHECK(result.error_log_size == result.error_log.size());
  CHECK(result.wall_ms > 0.0f);
  const auto counters = driver.counters();
  CHECK(counters.ptx_jit_compiles == 1);
  CHECK(counters.ptx_jit_failures == 1);
  CHECK(std::string(counters.last_error_log) == result.error_log);

  SECTION("a log buffer smaller than the log holds its first capacity - 1 bytes and a NUL") {
    const LoadResult small = load_ex(driver, ptx.c_str(), {}, {}, 16);
    CHECK(small.code == CUDA_ERROR_INVALID_PTX);
    CHECK(small.error_log == result.error_log.substr(0, 15));
    CHECK(small.error_log_size == 15);
  }
}

TEST_CASE("fake cuda driver: PTX whose .target the device cannot run is refused with 218", "[fake_cuda]") {
  const Driver& driver = fake();
  const LoadResult result = load_ex(driver, ptx_for_target("sm_100").c_str());
  CHECK(result.code == CUDA_ERROR_INVALID_PTX);
  CHECK(result.error_log.find("sm_100") != std::string::npos);
}

TEST_CASE("fake cuda driver: text that is not PTX at all is an invalid image", "[fake_cuda]") {
  const Driver& driver = fake();
  CUmodule module = nullptr;
  CHECK(driver.module_load_data(&module, "hello world") == CUDA_ERROR_INVALID_IMAGE);
  CHECK(driver.module_load_data(&module, "") == CUDA_ERROR_INVALID_IMAGE);
  CHECK(driver.module_load_data(nullptr, "hello world") == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("fake cuda driver: a fat binary loads the cubin the driver would pick, or JITs its PTX", "[fake_cuda]") {
  const Driver& driver = fake();
  const Bytes sm90 = nvjitlink_cubin(small_kernel_ptx(), "sm_90");
  const Bytes sm80 = nvjitlink_cubin(ptx_for_target("sm_80"), "sm_80");

  SECTION("an sm_90 cubin loads directly") {
    const Bytes fat = fat_binary({FatEntry{2, 90, false, 1, 8, sm90}});
    const LoadResult result = load_ex(driver, fat.data());
    REQUIRE(result.code == CUDA_SUCCESS);
    unload(driver, result.module);
    const auto counters = driver.counters();
    CHECK(counters.fatbin_loads == 1);
    CHECK(counters.cubin_loads_ok == 1);
    CHECK(counters.ptx_jit_compiles == 0);
  }
  SECTION("only an sm_80 cubin is 209") {
    const Bytes fat = fat_binary({FatEntry{2, 80, false, 1, 8, sm80}});
    CHECK(load_ex(driver, fat.data()).code == CUDA_ERROR_NO_BINARY_FOR_GPU);
  }
  SECTION("an sm_80 cubin with compute_80 PTX loads through the JIT") {
    const Bytes fat = fat_binary(
        {FatEntry{2, 80, false, 1, 8, sm80}, FatEntry{1, 80, false, 9, 0, ptx_bytes(ptx_for_target("sm_80"))}});
    const LoadResult result = load_ex(driver, fat.data());
    REQUIRE(result.code == CUDA_SUCCESS);
    CUfunction function = nullptr;
    CHECK(driver.module_get_function(&function, result.module, "reduce_partial") == CUDA_SUCCESS);
    unload(driver, result.module);
    CHECK(driver.counters().ptx_jit_compiles == 1);
  }
  SECTION("PTX newer than the driver's JIT is 222") {
    const std::string ptx99 = with_line_replaced(small_kernel_ptx(), ".version 9.0", ".version 9.9");
    const Bytes fat = fat_binary({FatEntry{1, 90, false, 9, 9, ptx_bytes(ptx99)}});
    CHECK(load_ex(driver, fat.data()).code == CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  }
  SECTION("the nvcc wrapper is followed to its container") {
    const Bytes fat = fat_binary({FatEntry{2, 90, false, 1, 8, sm90}});
    struct Wrapper {
      int magic;
      int version;
      const void* data;
      void* filename_or_fatbins;
    } wrapper{static_cast<int>(0x466243B1), 1, fat.data(), nullptr};
    const LoadResult result = load_ex(driver, &wrapper);
    REQUIRE(result.code == CUDA_SUCCESS);
    unload(driver, result.module);
  }
  SECTION("a container cut short is 200") {
    const Bytes fat = fat_binary({FatEntry{2, 90, false, 1, 8, sm90}});
    GuardedImage truncated(std::span(fat.data(), fat.size() - 100));
    CHECK(load_ex(driver, truncated.data()).code == CUDA_ERROR_INVALID_IMAGE);
  }
}

TEST_CASE("fake cuda driver: each fault point fails with its code, `times` limits how often, and clearing ends it",
          "[fake_cuda]") {
  const Driver& driver = fake();
  const std::string ptx = small_kernel_ptx();
  const Bytes cubin = linked_cubin(driver, ptx);
  const Bytes fat = fat_binary({FatEntry{2, 90, false, 1, 8, cubin}});
  driver.reset_counters();

  // One call per point, returning its CUresult (modules it loads are unloaded again).
  const auto call = [&](const std::string& point) -> CUresult {
    if (point == "ctx") {
      CUdevice device = -1;
      return driver.ctx_get_device(&device);
    }
    if (point == "load_cubin" || point == "load_ptx" || point == "load_fatbin") {
      const void* image = point == "load_cubin" ? static_cast<const void*>(cubin.data())
                          : point == "load_ptx" ? static_cast<const void*>(ptx.c_str())
                                                : static_cast<const void*>(fat.data());
      CUmodule module = nullptr;
      const CUresult result = driver.module_load_data(&module, image);
      if (result == CUDA_SUCCESS) unload(driver, module);
      return result;
    }
    const LinkResult linked = link_ptx(driver, ptx);
    if (point == "link_create") return linked.create;
    if (point == "link_add") return linked.add;
    return linked.complete;
  };

  const auto [point, code] = GENERATE(table<std::string, int>({
      {"ctx", 201},
      {"load_cubin", 200},
      {"load_ptx", 218},
      {"load_fatbin", 209},
      {"link_create", 221},
      {"link_add", 218},
      {"link_complete", 2},
  }));
  INFO(point);
  REQUIRE(call(point) == CUDA_SUCCESS);

  REQUIRE(driver.set_failure(point.c_str(), code, 2) == 0);
  CHECK(call(point) == code);
  CHECK(call(point) == code);
  CHECK(call(point) == CUDA_SUCCESS);

  REQUIRE(driver.set_failure(point.c_str(), code, 0) == 0);
  for (int i = 0; i < 3; ++i) CHECK(call(point) == code);
  driver.clear_failures();
  CHECK(call(point) == CUDA_SUCCESS);

  const auto counters = driver.counters();
  CHECK(counters.injected_failures == 5);
  CHECK(std::string(counters.last_error_log).find("injected failure at " + point) != std::string::npos);
  CHECK(counters.modules_alive == 0);
}

TEST_CASE("fake cuda driver: an injected cuLinkAddData failure reaches the caller's error log", "[fake_cuda]") {
  const Driver& driver = fake();
  REQUIRE(driver.set_failure("link_add", CUDA_ERROR_INVALID_PTX, 1) == 0);
  const LinkResult linked = link_ptx(driver, small_kernel_ptx());
  CHECK(linked.add == CUDA_ERROR_INVALID_PTX);
  CHECK(linked.error_log.find("injected failure at link_add") != std::string::npos);
  CHECK(driver.set_failure("no_such_point", 1, 1) == -1);
}

TEST_CASE("fake cuda driver: FAKE_CUDA_FAIL in the environment arms fault points, with and without a count",
          "[fake_cuda]") {
  const Driver& driver = fake();
  REQUIRE(setenv("FAKE_CUDA_FAIL", "link_create:223:2, ctx:201", 1) == 0);
  driver.reload_environment();
  unsetenv("FAKE_CUDA_FAIL");

  CUdevice device = -1;
  CHECK(link_ptx(driver, small_kernel_ptx()).create == CUDA_ERROR_JIT_COMPILATION_DISABLED);
  CHECK(link_ptx(driver, small_kernel_ptx()).create == CUDA_ERROR_JIT_COMPILATION_DISABLED);
  CHECK(link_ptx(driver, small_kernel_ptx()).create == CUDA_SUCCESS);
  for (int i = 0; i < 3; ++i) CHECK(driver.ctx_get_device(&device) == CUDA_ERROR_INVALID_CONTEXT);

  driver.reload_environment();
  CHECK(driver.ctx_get_device(&device) == CUDA_SUCCESS);
  CHECK(device == 0);
}

TEST_CASE("fake cuda driver: hidden entry points are reported as not found", "[fake_cuda]") {
  const Driver& driver = fake();
  void* pfn = reinterpret_cast<void*>(1);
  CUdriverProcAddressQueryResult status{};

  SECTION("through the control API") { driver.set_hidden("cuLinkCreate, cuModuleLoadDataEx"); }
  SECTION("through FAKE_CUDA_HIDE") {
    REQUIRE(setenv("FAKE_CUDA_HIDE", "cuLinkCreate,cuModuleLoadDataEx", 1) == 0);
    driver.reload_environment();
    unsetenv("FAKE_CUDA_HIDE");
  }
  for (const char* name : {"cuLinkCreate", "cuModuleLoadDataEx"}) {
    INFO(name);
    CHECK(driver.get_proc_address(name, &pfn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_SUCCESS);
    CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK(pfn == nullptr);
  }
  CHECK(driver.get_proc_address("cuModuleLoadData", &pfn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_SUCCESS);
  CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
  CHECK(pfn != nullptr);
  driver.reload_environment();
}

TEST_CASE("fake cuda driver: cuGetProcAddress picks the ABI version for the requested CUDA version", "[fake_cuda]") {
  const Driver& driver = fake();
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status{};

  SECTION("below the first version is VERSION_NOT_SUFFICIENT with no pointer") {
    CHECK(driver.get_proc_address("cuLinkCreate", &pfn, 5000, 0, &status) == CUDA_SUCCESS);
    CHECK(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK(pfn == nullptr);
    CHECK(driver.get_proc_address("cuCtxGetCurrent", &pfn, 3020, 0, &status) == CUDA_SUCCESS);
    CHECK(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  }
  SECTION("5050 gives the plain cuLinkCreate and 6050 gives cuLinkCreate_v2") {
    REQUIRE(driver.get_proc_address("cuLinkCreate", &pfn, 5050, 0, &status) == CUDA_SUCCESS);
    CHECK(pfn == dlsym(driver.handle, "cuLinkCreate"));
    REQUIRE(driver.get_proc_address("cuLinkCreate", &pfn, 6050, 0, &status) == CUDA_SUCCESS);
    CHECK(pfn == dlsym(driver.handle, "cuLinkCreate_v2"));
    REQUIRE(driver.get_proc_address("cuGetProcAddress", &pfn, 12000, 0, &status) == CUDA_SUCCESS);
    CHECK(pfn == dlsym(driver.handle, "cuGetProcAddress_v2"));
  }
  SECTION("a version above the driver's is CUDA_ERROR_INVALID_VALUE") {
    CHECK(driver.get_proc_address("cuModuleLoadData", &pfn, 13010, 0, &status) == CUDA_ERROR_INVALID_VALUE);
    REQUIRE(driver.set_device(0, 12080) == 0);
    CHECK(driver.get_proc_address("cuModuleLoadData", &pfn, 13000, 0, &status) == CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("an unknown name is SYMBOL_NOT_FOUND, and NOT_FOUND in the CUDA 11.3 form") {
    CHECK(driver.get_proc_address("cuFoo", &pfn, 13000, 0, &status) == CUDA_SUCCESS);
    CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    const auto legacy = reinterpret_cast<PFN_cuGetProcAddress_v11030>(dlsym(driver.handle, "cuGetProcAddress"));
    REQUIRE(legacy != nullptr);
    CHECK(legacy("cuFoo", &pfn, 13000, 0) == CUDA_ERROR_NOT_FOUND);
    CHECK(legacy("cuLinkCreate", &pfn, 13000, 0) == CUDA_SUCCESS);
    CHECK(pfn == dlsym(driver.handle, "cuLinkCreate_v2"));
  }
}

TEST_CASE("fake cuda driver: cuLinkCreate refuses CU_JIT_FALLBACK_STRATEGY as the driver does", "[fake_cuda]") {
  const Driver& driver = fake();
  CUjit_option option = CU_JIT_FALLBACK_STRATEGY;
  void* fallback = value(CU_PREFER_PTX);
  CUlinkState state = nullptr;
  CHECK(driver.link_create(1, &option, &fallback, &state) == CUDA_ERROR_INVALID_VALUE);
  CHECK(state == nullptr);
}

TEST_CASE("fake cuda driver: the device reports the compute capability it was given", "[fake_cuda]") {
  const Driver& driver = fake();
  int major = 0;
  int minor = 0;
  REQUIRE(driver.set_device(103, 0) == 0);
  REQUIRE(driver.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) == CUDA_SUCCESS);
  REQUIRE(driver.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0) == CUDA_SUCCESS);
  CHECK(major == 10);
  CHECK(minor == 3);
  CHECK(driver.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 1) ==
        CUDA_ERROR_INVALID_DEVICE);

  REQUIRE(setenv("FAKE_CUDA_CC", "8.6", 1) == 0);
  REQUIRE(setenv("FAKE_CUDA_DRIVER_VERSION", "12090", 1) == 0);
  driver.reload_environment();
  unsetenv("FAKE_CUDA_CC");
  unsetenv("FAKE_CUDA_DRIVER_VERSION");
  REQUIRE(driver.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) == CUDA_SUCCESS);
  REQUIRE(driver.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0) == CUDA_SUCCESS);
  int version = 0;
  REQUIRE(driver.driver_get_version(&version) == CUDA_SUCCESS);
  CHECK(major == 8);
  CHECK(minor == 6);
  CHECK(version == 12090);
  driver.reload_environment();
}

TEST_CASE("fake cuda driver: cuGetErrorName and cuGetErrorString know every load error", "[fake_cuda]") {
  const Driver& driver = fake();
  const auto [code, name] = GENERATE(table<int, std::string>({
      {1, "CUDA_ERROR_INVALID_VALUE"},
      {2, "CUDA_ERROR_OUT_OF_MEMORY"},
      {34, "CUDA_ERROR_STUB_LIBRARY"},
      {200, "CUDA_ERROR_INVALID_IMAGE"},
      {201, "CUDA_ERROR_INVALID_CONTEXT"},
      {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
      {218, "CUDA_ERROR_INVALID_PTX"},
      {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"},
      {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
      {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"},
      {224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY"},
      {225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC"},
      {300, "CUDA_ERROR_INVALID_SOURCE"},
      {301, "CUDA_ERROR_FILE_NOT_FOUND"},
      {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND"},
      {400, "CUDA_ERROR_INVALID_HANDLE"},
      {500, "CUDA_ERROR_NOT_FOUND"},
      {801, "CUDA_ERROR_NOT_SUPPORTED"},
      {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
  }));
  const char* text = nullptr;
  REQUIRE(driver.get_error_name(static_cast<CUresult>(code), &text) == CUDA_SUCCESS);
  CHECK(std::string(text) == name);
  REQUIRE(driver.get_error_string(static_cast<CUresult>(code), &text) == CUDA_SUCCESS);
  CHECK_FALSE(std::string(text).empty());
  CHECK(driver.get_error_name(static_cast<CUresult>(12345), &text) == CUDA_ERROR_INVALID_VALUE);
  CHECK(text == nullptr);
}

TEST_CASE("fake cuda driver: cuGetErrorName and cuGetErrorString answer every code of jitcache's CUresult table",
          "[fake_cuda]") {
  const Driver& driver = fake();
  for (const jitcache::proto::CuResultName& row : jitcache::proto::k_cu_result_names) {
    INFO(row.name);
    const char* text = nullptr;
    REQUIRE(driver.get_error_name(static_cast<CUresult>(row.code), &text) == CUDA_SUCCESS);
    CHECK(std::string_view(text) == row.name);
    REQUIRE(driver.get_error_string(static_cast<CUresult>(row.code), &text) == CUDA_SUCCESS);
    CHECK(std::string_view(text) == row.description);
  }
}

TEST_CASE("fake cuda driver: random bytes behind any magic are an error, never a crash", "[fake_cuda]") {
  const Driver& driver = fake();
  std::mt19937 random(20240611);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::vector<Bytes> magics = {to_bytes("\x7f"
                                              "ELF\x02\x01\x01",
                                              7),
                                     to_bytes("\x50\xed\x55\xba\x01\x00\x10\x00", 8),
                                     to_bytes("\xb1\x43\x62\x46\x01\x00\x00\x00", 8), to_bytes(".version 9.0\n", 13)};
  for (const Bytes& magic : magics) {
    for (int round = 0; round < 50; ++round) {
      Bytes image = magic;
      const std::size_t extra = static_cast<std::size_t>(byte(random)) * 4;
      for (std::size_t i = 0; i < extra; ++i) image.push_back(static_cast<std::byte>(byte(random)));
      GuardedImage guarded(image);
      CUmodule module = nullptr;
      const CUresult result = driver.module_load_data(&module, guarded.data());
      CHECK(result != CUDA_SUCCESS);
      if (result == CUDA_SUCCESS) unload(driver, module);
    }
  }
  CHECK(driver.counters().modules_alive == 0);
}

TEST_CASE("fake cuda driver: many threads load, resolve and unload at once and every count adds up", "[fake_cuda]") {
  const Driver& driver = fake();
  const std::string ptx = small_kernel_ptx();
  const Bytes cubin = linked_cubin(driver, ptx);
  driver.reset_counters();
  constexpr int k_threads = 4;
  constexpr int k_rounds = 3;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < k_rounds; ++round) {
        const void* image =
            (t + round) % 2 == 0 ? static_cast<const void*>(ptx.c_str()) : static_cast<const void*>(cubin.data());
        CUmodule module = nullptr;
        CUfunction function = nullptr;
        if (driver.module_load_data(&module, image) != CUDA_SUCCESS ||
            driver.module_get_function(&function, module, "reduce_partial") != CUDA_SUCCESS ||
            driver.module_unload(module) != CUDA_SUCCESS) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(failures.load() == 0);
  const auto counters = driver.counters();
  CHECK(counters.module_load_calls == k_threads * k_rounds);
  CHECK(counters.ptx_jit_compiles + counters.cubin_loads_ok == k_threads * k_rounds);
  CHECK(counters.ptx_jit_compiles == k_threads * k_rounds / 2);
  CHECK(counters.modules_alive == 0);
}

#else

TEST_CASE("fake cuda driver: skipped where it is not built", "[fake_cuda]") {
  JITCACHE_MARK_SKIPPED("the fake CUDA driver needs the CUDA toolkit and nvJitLink at build time");
}

#endif
