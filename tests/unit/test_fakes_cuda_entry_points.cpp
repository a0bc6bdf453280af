// The fake CUDA driver's entry points beyond loading PTX and cubins from memory: each is exported under
// its ABI name and handed out by cuGetProcAddress{,_v2} at the versions cudaTypedefs.h gives it, with
// the flags cuda.h defines; cuModuleLoad, cuModuleLoadFatBinary, cuModuleGetLoadingMode,
// cuLinkAddFile, cuGetExportTable, cuLaunchKernel and several devices behave as
// tests/fakes/README.md says. Opened by path and resolved through cuGetProcAddress_v2, as programs
// reach libcuda.
#include <catch2/catch.hpp>

#include <tests/support/test_skip.hpp>

#if defined(JITCACHE_FAKE_CUDA_DRIVER)

#include <tests/support/fake_cuda_handle.hpp>
#include <tests/support/fake_cuda_images.hpp>
#include <tests/support/temp_dir.hpp>

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace jitcache::testing::fake_cuda;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;

struct AbiRow {
  const char* base;
  int version;
  const char* abi;
};

// Every entry point of the fake, at its first version and, where a later ABI exists, at that one.
const std::vector<AbiRow> k_abi_rows = {
    {"cuInit", 2000, "cuInit"},
    {"cuDriverGetVersion", 2020, "cuDriverGetVersion"},
    {"cuGetErrorName", 6000, "cuGetErrorName"},
    {"cuGetErrorString", 6000, "cuGetErrorString"},
    {"cuDeviceGet", 2000, "cuDeviceGet"},
    {"cuDeviceGetCount", 2000, "cuDeviceGetCount"},
    {"cuDeviceGetAttribute", 2000, "cuDeviceGetAttribute"},
    {"cuCtxGetCurrent", 4000, "cuCtxGetCurrent"},
    {"cuCtxGetDevice", 2000, "cuCtxGetDevice"},
    {"cuCtxGetDevice", 13000, "cuCtxGetDevice_v2"},
    {"cuModuleLoad", 2000, "cuModuleLoad"},
    {"cuModuleLoadData", 2000, "cuModuleLoadData"},
    {"cuModuleLoadDataEx", 2010, "cuModuleLoadDataEx"},
    {"cuModuleLoadFatBinary", 2000, "cuModuleLoadFatBinary"},
    {"cuModuleUnload", 2000, "cuModuleUnload"},
    {"cuModuleGetFunction", 2000, "cuModuleGetFunction"},
    {"cuModuleGetLoadingMode", 11070, "cuModuleGetLoadingMode"},
    {"cuLibraryLoadData", 12000, "cuLibraryLoadData"},
    {"cuLibraryLoadFromFile", 12000, "cuLibraryLoadFromFile"},
    {"cuLibraryUnload", 12000, "cuLibraryUnload"},
    {"cuLibraryGetKernel", 12000, "cuLibraryGetKernel"},
    {"cuLibraryGetKernelCount", 12040, "cuLibraryGetKernelCount"},
    {"cuLibraryEnumerateKernels", 12040, "cuLibraryEnumerateKernels"},
    {"cuLibraryGetModule", 12000, "cuLibraryGetModule"},
    {"cuKernelGetFunction", 12000, "cuKernelGetFunction"},
    {"cuLinkCreate", 5050, "cuLinkCreate"},
    {"cuLinkCreate", 6050, "cuLinkCreate_v2"},
    {"cuLinkAddData", 5050, "cuLinkAddData"},
    {"cuLinkAddData", 6050, "cuLinkAddData_v2"},
    {"cuLinkAddFile", 5050, "cuLinkAddFile"},
    {"cuLinkAddFile", 6050, "cuLinkAddFile_v2"},
    {"cuLinkComplete", 5050, "cuLinkComplete"},
    {"cuLinkDestroy", 5050, "cuLinkDestroy"},
    {"cuLaunchKernel", 4000, "cuLaunchKernel"},
    {"cuGetExportTable", 3000, "cuGetExportTable"},
    {"cuGetProcAddress", 11030, "cuGetProcAddress"},
    {"cuGetProcAddress", 12000, "cuGetProcAddress_v2"},
};

CUresult query(const FakeCudaHandle& fake, const char* base, int version, cuuint64_t flags, void*& pfn,
               CUdriverProcAddressQueryResult& status) {
  pfn = reinterpret_cast<void*>(1);
  status = static_cast<CUdriverProcAddressQueryResult>(-1);
  return fake.get_proc_address()(base, &pfn, version, flags, &status);
}

std::string write_temp(const TempDir& dir, const std::string& name, const Bytes& bytes) {
  const std::string path = dir.file(name);
  write_file(path, std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  return path;
}

CUfunction loaded_function(const FakeCudaHandle& fake, CUmodule& module) {
  const std::string ptx = small_kernel_ptx();
  REQUIRE(fake.entry<PFN_cuModuleLoadData_v2000>("cuModuleLoadData", 2000)(&module, ptx.c_str()) == CUDA_SUCCESS);
  CUfunction function = nullptr;
  REQUIRE(fake.entry<PFN_cuModuleGetFunction_v2000>("cuModuleGetFunction", 2000)(&function, module, "reduce_partial") ==
          CUDA_SUCCESS);
  return function;
}

}  // namespace

TEST_CASE(
    "fake cuda entry points: every base name resolves through cuGetProcAddress_v2 to the function exported under its "
    "ABI name",
    "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  for (const AbiRow& row : k_abi_rows) {
    INFO(row.base << " at " << row.version << " should be " << row.abi);
    void* exported = fake.symbol(row.abi);
    REQUIRE(exported != nullptr);
    void* pfn = nullptr;
    CUdriverProcAddressQueryResult status{};
    REQUIRE(query(fake, row.base, row.version, CU_GET_PROC_ADDRESS_DEFAULT, pfn, status) == CUDA_SUCCESS);
    CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
    CHECK(pfn == exported);
    // The newest version the fake driver itself is at still gives an ABI of the same entry point.
    REQUIRE(query(fake, row.base, 13000, CU_GET_PROC_ADDRESS_DEFAULT, pfn, status) == CUDA_SUCCESS);
    CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
  }
}

TEST_CASE("fake cuda entry points: a version below an entry point's first is VERSION_NOT_SUFFICIENT with no pointer",
          "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const auto [base, version] = GENERATE(table<const char*, int>({
      {"cuLibraryLoadData", 11000},  // what the H200 answered (docs/driver-facts.md §5)
      {"cuLibraryGetKernelCount", 12030},
      {"cuLibraryEnumerateKernels", 12030},
      {"cuKernelGetFunction", 11080},
      {"cuModuleGetLoadingMode", 11060},
      {"cuLinkAddFile", 5000},
      {"cuLaunchKernel", 3020},
      {"cuGetExportTable", 2020},
      {"cuGetProcAddress", 11020},
  }));
  INFO(base << " at " << version);
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  REQUIRE(query(fake, base, version, CU_GET_PROC_ADDRESS_DEFAULT, pfn, status) == CUDA_SUCCESS);
  CHECK(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  CHECK(pfn == nullptr);
}

TEST_CASE(
    "fake cuda entry points: cuGetProcAddress asked for itself gives the 4-argument form at 11030 and _v2 at 12000, "
    "and the 4-argument form answers",
    "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  REQUIRE(query(fake, "cuGetProcAddress", 11030, CU_GET_PROC_ADDRESS_DEFAULT, pfn, status) == CUDA_SUCCESS);
  REQUIRE(pfn == fake.symbol("cuGetProcAddress"));
  const auto legacy = reinterpret_cast<PFN_cuGetProcAddress_v11030>(pfn);
  void* found = nullptr;
  CHECK(legacy("cuModuleLoadData", &found, 11030, CU_GET_PROC_ADDRESS_DEFAULT) == CUDA_SUCCESS);
  CHECK(found == fake.symbol("cuModuleLoadData"));
  CHECK(legacy("cuLibraryLoadData", &found, 11030, CU_GET_PROC_ADDRESS_DEFAULT) == CUDA_ERROR_NOT_FOUND);

  REQUIRE(query(fake, "cuGetProcAddress", 12000, CU_GET_PROC_ADDRESS_DEFAULT, pfn, status) == CUDA_SUCCESS);
  CHECK(pfn == fake.symbol("cuGetProcAddress_v2"));
  REQUIRE(query(fake, "cuGetProcAddress", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, pfn, status) == CUDA_SUCCESS);
  CHECK(pfn == fake.symbol("cuGetProcAddress_v2"));
}

TEST_CASE(
    "fake cuda entry points: PER_THREAD_DEFAULT_STREAM gives the _ptsz ABI where there is one and the legacy one "
    "elsewhere, DEFAULT and LEGACY_STREAM always the legacy one",
    "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  for (const cuuint64_t flags :
       {cuuint64_t{CU_GET_PROC_ADDRESS_DEFAULT}, cuuint64_t{CU_GET_PROC_ADDRESS_LEGACY_STREAM}}) {
    INFO("flags " << flags);
    REQUIRE(query(fake, "cuLaunchKernel", 13000, flags, pfn, status) == CUDA_SUCCESS);
    CHECK(pfn == fake.symbol("cuLaunchKernel"));
  }
  REQUIRE(query(fake, "cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, pfn, status) ==
          CUDA_SUCCESS);
  CHECK(pfn == fake.symbol("cuLaunchKernel_ptsz"));
  // cuLaunchKernel_ptsz came with CUDA 7.0; before it the legacy ABI is all there is.
  REQUIRE(query(fake, "cuLaunchKernel", 6050, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, pfn, status) ==
          CUDA_SUCCESS);
  CHECK(pfn == fake.symbol("cuLaunchKernel"));
  REQUIRE(query(fake, "cuModuleLoadData", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, pfn, status) ==
          CUDA_SUCCESS);
  CHECK(pfn == fake.symbol("cuModuleLoadData"));
  CHECK(query(fake, "cuModuleLoadData", 13000, 4, pfn, status) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("fake cuda entry points: cuInit takes flags 0 only", "[fake_cuda]") {
  const auto init = fake_cuda().entry<PFN_cuInit_v2000>("cuInit", 2000);
  CHECK(init(0) == CUDA_SUCCESS);
  CHECK(init(1) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("fake cuda entry points: cuModuleLoad loads a PTX or cubin file and answers 301 for one it cannot read",
          "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const auto module_load = fake.entry<PFN_cuModuleLoad_v2000>("cuModuleLoad", 2000);
  const auto get_function = fake.entry<PFN_cuModuleGetFunction_v2000>("cuModuleGetFunction", 2000);
  const auto unload = fake.entry<PFN_cuModuleUnload_v2000>("cuModuleUnload", 2000);
  const TempDir dir("fake-cuda-module-load");
  const std::string ptx = small_kernel_ptx();
  const std::string ptx_path = write_temp(dir, "kernel.ptx", ptx_bytes(ptx));  // no NUL in the file
  const std::string cubin_path = write_temp(dir, "kernel.cubin", nvjitlink_cubin(ptx, "sm_90"));

  for (const std::string& path : {ptx_path, cubin_path}) {
    INFO(path);
    CUmodule module = nullptr;
    REQUIRE(module_load(&module, path.c_str()) == CUDA_SUCCESS);
    CUfunction function = nullptr;
    CHECK(get_function(&function, module, "reduce_partial") == CUDA_SUCCESS);
    CHECK(unload(module) == CUDA_SUCCESS);
  }
  CUmodule module = nullptr;
  CHECK(module_load(&module, dir.file("missing.ptx").c_str()) == CUDA_ERROR_FILE_NOT_FOUND);
  CHECK(module_load(&module, dir.path().c_str()) == CUDA_ERROR_FILE_NOT_FOUND);
  CHECK(module_load(&module, nullptr) == CUDA_ERROR_INVALID_VALUE);
  // The file's contents go through the same checks as cuModuleLoadData's image.
  const std::string sm80_path = write_temp(dir, "sm80.cubin", nvjitlink_cubin(ptx_for_target("sm_80"), "sm_80"));
  CHECK(module_load(&module, sm80_path.c_str()) == CUDA_ERROR_NO_BINARY_FOR_GPU);

  const fake_cuda_counters counters = fake.counters();
  CHECK(counters.load_calls.module_load == 6);
  CHECK(counters.module_load_calls == 6);
  CHECK(counters.ptx_jit_compiles == 1);
  CHECK(counters.cubin_loads_ok == 1);
  CHECK(counters.modules_alive == 0);
}

TEST_CASE("fake cuda entry points: cuModuleLoadFatBinary loads a container or the nvcc wrapper around one",
          "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const auto load_fat_binary = fake.entry<PFN_cuModuleLoadFatBinary_v2000>("cuModuleLoadFatBinary", 2000);
  const auto get_function = fake.entry<PFN_cuModuleGetFunction_v2000>("cuModuleGetFunction", 2000);
  const auto unload = fake.entry<PFN_cuModuleUnload_v2000>("cuModuleUnload", 2000);
  const Bytes fat = fat_binary({FatEntry{1, 90, false, 9, 0, ptx_bytes(small_kernel_ptx())}});
  const FatbinWrapper wrapper{static_cast<int>(0x466243B1), 1, fat.data(), nullptr};

  for (const void* image : {static_cast<const void*>(fat.data()), static_cast<const void*>(&wrapper)}) {
    CUmodule module = nullptr;
    REQUIRE(load_fat_binary(&module, image) == CUDA_SUCCESS);
    CUfunction function = nullptr;
    CHECK(get_function(&function, module, "reduce_partial") == CUDA_SUCCESS);
    CHECK(unload(module) == CUDA_SUCCESS);
  }
  const Bytes sm80_only = fat_binary({FatEntry{2, 80, false, 1, 8, nvjitlink_cubin(ptx_for_target("sm_80"), "sm_80")}});
  CUmodule module = nullptr;
  CHECK(load_fat_binary(&module, sm80_only.data()) == CUDA_ERROR_NO_BINARY_FOR_GPU);
  CHECK(load_fat_binary(nullptr, fat.data()) == CUDA_ERROR_INVALID_VALUE);

  const fake_cuda_counters counters = fake.counters();
  CHECK(counters.load_calls.module_load_fatbinary == 4);
  CHECK(counters.fatbin_loads == 3);
  CHECK(counters.ptx_jit_compiles == 2);
}

TEST_CASE("fake cuda entry points: cuModuleGetLoadingMode is LAZY unless CUDA_MODULE_LOADING=EAGER", "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const auto loading_mode = fake.entry<PFN_cuModuleGetLoadingMode_v11070>("cuModuleGetLoadingMode", 11070);
  CUmoduleLoadingMode mode{};
  REQUIRE(loading_mode(&mode) == CUDA_SUCCESS);
  CHECK(mode == CU_MODULE_LAZY_LOADING);
  REQUIRE(setenv("CUDA_MODULE_LOADING", "EAGER", 1) == 0);
  fake.reload_environment();
  unsetenv("CUDA_MODULE_LOADING");
  REQUIRE(loading_mode(&mode) == CUDA_SUCCESS);
  CHECK(mode == CU_MODULE_EAGER_LOADING);
  fake.reload_environment();
  REQUIRE(loading_mode(&mode) == CUDA_SUCCESS);
  CHECK(mode == CU_MODULE_LAZY_LOADING);
  CHECK(loading_mode(nullptr) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("fake cuda entry points: cuLinkAddFile, plain and _v2, links a PTX file and answers 301 for a missing one",
          "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const auto create = fake.entry<PFN_cuLinkCreate_v6050>("cuLinkCreate", 6050);
  const auto complete = fake.entry<PFN_cuLinkComplete_v5050>("cuLinkComplete", 5050);
  const auto destroy = fake.entry<PFN_cuLinkDestroy_v5050>("cuLinkDestroy", 5050);
  const TempDir dir("fake-cuda-link-add-file");
  const std::string ptx_path = write_temp(dir, "kernel.ptx", ptx_bytes(small_kernel_ptx()));

  for (const int version : {5050, 6050}) {
    INFO("cuLinkAddFile at " << version);
    const auto add_file = fake.entry<PFN_cuLinkAddFile_v6050>("cuLinkAddFile", version);
    CUlinkState state = nullptr;
    REQUIRE(create(0, nullptr, nullptr, &state) == CUDA_SUCCESS);
    CHECK(add_file(state, CU_JIT_INPUT_PTX, dir.file("missing.ptx").c_str(), 0, nullptr, nullptr) ==
          CUDA_ERROR_FILE_NOT_FOUND);
    REQUIRE(add_file(state, CU_JIT_INPUT_PTX, ptx_path.c_str(), 0, nullptr, nullptr) == CUDA_SUCCESS);
    void* cubin = nullptr;
    std::size_t size = 0;
    REQUIRE(complete(state, &cubin, &size) == CUDA_SUCCESS);
    CHECK(size > 64);
    REQUIRE(destroy(state) == CUDA_SUCCESS);
    CHECK(add_file(state, CU_JIT_INPUT_PTX, ptx_path.c_str(), 0, nullptr, nullptr) == CUDA_ERROR_INVALID_HANDLE);
  }
  const fake_cuda_counters counters = fake.counters();
  CHECK(counters.link_add_file_calls == 6);
  CHECK(counters.link_compiles == 2);
  CHECK(counters.link_completes == 2);
}

TEST_CASE("fake cuda entry points: cuGetExportTable offers no private table", "[fake_cuda]") {
  const auto get_export_table = fake_cuda().entry<PFN_cuGetExportTable_v3000>("cuGetExportTable", 3000);
  const CUuuid id{{0x6b, static_cast<char>(0xd5), static_cast<char>(0xfb), 0x6c}};
  const void* table = reinterpret_cast<const void*>(1);
  CHECK(get_export_table(&table, &id) == CUDA_ERROR_NOT_SUPPORTED);
  CHECK(table == nullptr);
  CHECK(get_export_table(nullptr, &id) == CUDA_ERROR_INVALID_VALUE);
  CHECK(get_export_table(&table, nullptr) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("fake cuda entry points: cuLaunchKernel records the kernel and geometry of a loaded module's function",
          "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const auto launch = fake.entry<PFN_cuLaunchKernel_v4000>("cuLaunchKernel", 4000);
  const auto launch_ptsz =
      fake.entry<PFN_cuLaunchKernel_v7000_ptsz>("cuLaunchKernel", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  const auto unload = fake.entry<PFN_cuModuleUnload_v2000>("cuModuleUnload", 2000);
  fake_cuda_launch last{};
  CHECK(fake.last_launch(last) == -1);

  CUmodule module = nullptr;
  const CUfunction function = loaded_function(fake, module);
  int n = 1024;
  void* params[] = {&n};
  REQUIRE(launch(function, 4, 2, 1, 128, 1, 1, 256, nullptr, params, nullptr) == CUDA_SUCCESS);
  REQUIRE(fake.last_launch(last) == 0);
  CHECK(std::string(last.kernel_name) == "reduce_partial");
  CHECK((last.grid[0] == 4 && last.grid[1] == 2 && last.grid[2] == 1));
  CHECK((last.block[0] == 128 && last.block[1] == 1 && last.block[2] == 1));
  CHECK(last.shared_mem_bytes == 256);
  CHECK(last.through_kernel_handle == 0);
  CHECK(last.sequence == 1);
  REQUIRE(launch_ptsz(function, 1, 1, 1, 32, 1, 1, 0, CU_STREAM_PER_THREAD, params, nullptr) == CUDA_SUCCESS);
  REQUIRE(fake.last_launch(last) == 0);
  CHECK(last.sequence == 2);

  SECTION("what the driver refuses is not recorded") {
    CHECK(launch(function, 1, 1, 1, 32, 1, 1, 0, nullptr, params, params) == CUDA_ERROR_INVALID_VALUE);
    CHECK(launch(function, 0, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr) == CUDA_ERROR_INVALID_VALUE);
    CHECK(launch(function, 1, 1, 1, 1025, 1, 1, 0, nullptr, params, nullptr) == CUDA_ERROR_INVALID_VALUE);
    CHECK(launch(function, 1, 1, 1, 32, 1, 1, 0, reinterpret_cast<CUstream>(0x1234), params, nullptr) ==
          CUDA_ERROR_INVALID_HANDLE);
    CHECK(launch(reinterpret_cast<CUfunction>(&n), 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr) ==
          CUDA_ERROR_INVALID_HANDLE);
    REQUIRE(fake.set_failure("launch", CUDA_ERROR_LAUNCH_FAILED, 1) == 0);
    CHECK(launch(function, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr) == CUDA_ERROR_LAUNCH_FAILED);
    CHECK(fake.counters().kernels_launched == 2);
    REQUIRE(unload(module) == CUDA_SUCCESS);
    CHECK(launch(function, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(fake.counters().kernels_launched == 2);
  }
  SECTION("fake_cuda_reset_counters forgets the last launch") {
    fake.reset_counters();
    CHECK(fake.last_launch(last) == -1);
    CHECK(last.kernel_name[0] == '\0');
    REQUIRE(unload(module) == CUDA_SUCCESS);
  }
}

TEST_CASE("fake cuda entry points: FAKE_CUDA_DEVICES makes a host of several devices with device 0 current",
          "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const auto device_count = fake.entry<PFN_cuDeviceGetCount_v2000>("cuDeviceGetCount", 2000);
  const auto device_get = fake.entry<PFN_cuDeviceGet_v2000>("cuDeviceGet", 2000);
  const auto attribute = fake.entry<PFN_cuDeviceGetAttribute_v2000>("cuDeviceGetAttribute", 2000);
  const auto ctx_device = fake.entry<PFN_cuCtxGetDevice_v2000>("cuCtxGetDevice", 2000);
  const auto load_data = fake.entry<PFN_cuModuleLoadData_v2000>("cuModuleLoadData", 2000);

  SECTION("through the environment, which wins over FAKE_CUDA_CC") {
    REQUIRE(setenv("FAKE_CUDA_DEVICES", "90, 80", 1) == 0);
    REQUIRE(setenv("FAKE_CUDA_CC", "100", 1) == 0);
    fake.reload_environment();
    unsetenv("FAKE_CUDA_DEVICES");
    unsetenv("FAKE_CUDA_CC");
  }
  SECTION("through the control API") { REQUIRE(fake.set_devices("90,80") == 0); }

  int count = 0;
  REQUIRE(device_count(&count) == CUDA_SUCCESS);
  CHECK(count == 2);
  const int expected_major[] = {9, 8};
  for (int ordinal = 0; ordinal < 2; ++ordinal) {
    CUdevice device = -1;
    REQUIRE(device_get(&device, ordinal) == CUDA_SUCCESS);
    CHECK(device == ordinal);
    int major = 0;
    int minor = -1;
    REQUIRE(attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) == CUDA_SUCCESS);
    REQUIRE(attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device) == CUDA_SUCCESS);
    CHECK(major == expected_major[ordinal]);
    CHECK(minor == 0);
  }
  CUdevice device = -1;
  CHECK(device_get(&device, 2) == CUDA_ERROR_INVALID_DEVICE);
  int value = 0;
  CHECK(attribute(&value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 2) == CUDA_ERROR_INVALID_DEVICE);
  REQUIRE(ctx_device(&device) == CUDA_SUCCESS);
  CHECK(device == 0);
  // Loads are for the current context's device: an sm_80 cubin does not run on device 0.
  const Bytes sm80 = nvjitlink_cubin(ptx_for_target("sm_80"), "sm_80");
  CUmodule module = nullptr;
  CHECK(load_data(&module, sm80.data()) == CUDA_ERROR_NO_BINARY_FOR_GPU);
  // fake_cuda_set_device changes device 0 only.
  REQUIRE(fake.set_device(86, 0) == 0);
  REQUIRE(attribute(&value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0) == CUDA_SUCCESS);
  CHECK(value == 6);
  REQUIRE(attribute(&value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 1) == CUDA_SUCCESS);
  CHECK(value == 0);
  REQUIRE(device_count(&count) == CUDA_SUCCESS);
  CHECK(count == 2);

  CHECK(fake.set_devices("90,banana") == -1);
  CHECK(fake.set_devices("90,,80") == -1);
  REQUIRE(device_count(&count) == CUDA_SUCCESS);
  CHECK(count == 2);
  REQUIRE(fake.set_devices(nullptr) == 0);
  REQUIRE(device_count(&count) == CUDA_SUCCESS);
  CHECK(count == 1);
  fake.reload_environment();
}

#else

TEST_CASE("fake cuda entry points: skipped where the fake is not built", "[fake_cuda]") {
  JITCACHE_MARK_SKIPPED("the fake CUDA driver needs the CUDA toolkit and nvJitLink at build time");
}

#endif
