// The fake CUDA driver's cuLibrary* API behaves as docs/driver-facts.md §0.2 and §6 say the driver's
// does: any image loads with CUDA_SUCCESS and a bad one fails at cuLibraryGetKernel with what
// cuModuleLoadData would have said; PTX and fat binaries are JIT-compiled as for modules; and a
// library loaded with CU_LIBRARY_BINARY_IS_PRESERVED answers CUDA_ERROR_ILLEGAL_STATE, with a warning,
// once its caller's image changed or went away before cuLibraryUnload.
#include <catch2/catch.hpp>

#include <tests/support/test_skip.hpp>

#if defined(JITCACHE_FAKE_CUDA_DRIVER)

#include <tests/support/fake_cuda_handle.hpp>
#include <tests/support/fake_cuda_images.hpp>
#include <tests/support/temp_dir.hpp>

#include <cuda.h>
#include <cudaTypedefs.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace jitcache::testing::fake_cuda;
using jitcache::testing::TempDir;

struct LibraryApi {
  PFN_cuLibraryLoadData_v12000 load_data;
  PFN_cuLibraryLoadFromFile_v12000 load_from_file;
  PFN_cuLibraryUnload_v12000 unload;
  PFN_cuLibraryGetKernel_v12000 get_kernel;
  PFN_cuLibraryGetKernelCount_v12040 kernel_count;
  PFN_cuLibraryEnumerateKernels_v12040 enumerate_kernels;
  PFN_cuLibraryGetModule_v12000 get_module;
  PFN_cuKernelGetFunction_v12000 kernel_function;
  PFN_cuModuleLoadData_v2000 module_load_data;
  PFN_cuModuleGetFunction_v2000 module_get_function;
  PFN_cuModuleUnload_v2000 module_unload;
  PFN_cuLaunchKernel_v4000 launch;

  explicit LibraryApi(const FakeCudaHandle& fake)
      : load_data(fake.entry<PFN_cuLibraryLoadData_v12000>("cuLibraryLoadData", 12000)),
        load_from_file(fake.entry<PFN_cuLibraryLoadFromFile_v12000>("cuLibraryLoadFromFile", 12000)),
        unload(fake.entry<PFN_cuLibraryUnload_v12000>("cuLibraryUnload", 12000)),
        get_kernel(fake.entry<PFN_cuLibraryGetKernel_v12000>("cuLibraryGetKernel", 12000)),
        kernel_count(fake.entry<PFN_cuLibraryGetKernelCount_v12040>("cuLibraryGetKernelCount", 12040)),
        enumerate_kernels(fake.entry<PFN_cuLibraryEnumerateKernels_v12040>("cuLibraryEnumerateKernels", 12040)),
        get_module(fake.entry<PFN_cuLibraryGetModule_v12000>("cuLibraryGetModule", 12000)),
        kernel_function(fake.entry<PFN_cuKernelGetFunction_v12000>("cuKernelGetFunction", 12000)),
        module_load_data(fake.entry<PFN_cuModuleLoadData_v2000>("cuModuleLoadData", 2000)),
        module_get_function(fake.entry<PFN_cuModuleGetFunction_v2000>("cuModuleGetFunction", 2000)),
        module_unload(fake.entry<PFN_cuModuleUnload_v2000>("cuModuleUnload", 2000)),
        launch(fake.entry<PFN_cuLaunchKernel_v4000>("cuLaunchKernel", 4000)) {}

  // cuLibraryLoadData with no JIT options, and CU_LIBRARY_BINARY_IS_PRESERVED when asked.
  CUresult load(CUlibrary* library, const void* image, bool preserved = false) const {
    CUlibraryOption option = CU_LIBRARY_BINARY_IS_PRESERVED;
    return load_data(library, image, nullptr, nullptr, 0, preserved ? &option : nullptr, nullptr, preserved ? 1 : 0);
  }
};

// What stderr received while it lived (the fake's warnings go there).
class StderrCapture {
 public:
  StderrCapture() : m_file(std::tmpfile()) {
    REQUIRE(m_file != nullptr);
    std::fflush(stderr);
    m_saved = dup(STDERR_FILENO);
    REQUIRE(dup2(fileno(m_file), STDERR_FILENO) >= 0);
  }
  ~StderrCapture() {
    restore();
    std::fclose(m_file);
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  std::string text() {
    restore();
    std::string out;
    std::rewind(m_file);
    char chunk[512];
    while (const std::size_t n = std::fread(chunk, 1, sizeof(chunk), m_file)) out.append(chunk, n);
    return out;
  }

 private:
  void restore() {
    if (m_saved < 0) return;
    std::fflush(stderr);
    dup2(m_saved, STDERR_FILENO);
    close(m_saved);
    m_saved = -1;
  }

  std::FILE* m_file = nullptr;
  int m_saved = -1;
};

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE(
    "fake cuda library: a cubin for the device loads as a library whose kernel, module and function resolve and "
    "launch",
    "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LibraryApi api(fake);
  const Bytes cubin = nvjitlink_cubin(small_kernel_ptx(), "sm_90a");
  CUlibrary library = nullptr;
  REQUIRE(api.load(&library, cubin.data()) == CUDA_SUCCESS);
  CHECK(fake.counters().libraries_alive == 1);
  CHECK(fake.counters().modules_alive == 0);

  CUkernel kernel = nullptr;
  REQUIRE(api.get_kernel(&kernel, library, "reduce_partial") == CUDA_SUCCESS);
  CUkernel missing = nullptr;
  CHECK(api.get_kernel(&missing, library, "no_such_kernel") == CUDA_ERROR_NOT_FOUND);
  unsigned count = 0;
  REQUIRE(api.kernel_count(&count, library) == CUDA_SUCCESS);
  CHECK(count == 1);
  std::vector<CUkernel> kernels(4, nullptr);
  REQUIRE(api.enumerate_kernels(kernels.data(), 4, library) == CUDA_SUCCESS);
  CHECK(kernels[0] == kernel);
  CHECK(kernels[1] == nullptr);

  CUfunction function = nullptr;
  REQUIRE(api.kernel_function(&function, kernel) == CUDA_SUCCESS);
  CUmodule module = nullptr;
  REQUIRE(api.get_module(&module, library) == CUDA_SUCCESS);
  CUfunction from_module = nullptr;
  REQUIRE(api.module_get_function(&from_module, module, "reduce_partial") == CUDA_SUCCESS);
  CHECK(from_module == function);
  CHECK(api.module_unload(module) == CUDA_ERROR_NOT_PERMITTED);

  // Both the CUfunction and the CUkernel cast to CUfunction launch (cuda.h, cuLaunchKernel).
  REQUIRE(api.launch(function, 1, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr) == CUDA_SUCCESS);
  fake_cuda_launch last{};
  REQUIRE(fake.last_launch(last) == 0);
  CHECK(std::string(last.kernel_name) == "reduce_partial");
  CHECK(last.through_kernel_handle == 0);
  REQUIRE(api.launch(reinterpret_cast<CUfunction>(kernel), 2, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr) ==
          CUDA_SUCCESS);
  REQUIRE(fake.last_launch(last) == 0);
  CHECK(last.through_kernel_handle == 1);
  CHECK(last.grid[0] == 2);

  REQUIRE(api.unload(library) == CUDA_SUCCESS);
  CHECK(fake.counters().libraries_alive == 0);
  CHECK(api.unload(library) == CUDA_ERROR_INVALID_VALUE);
  CHECK(api.get_kernel(&kernel, library, "reduce_partial") == CUDA_ERROR_INVALID_HANDLE);
  CHECK(api.kernel_function(&function, kernel) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(api.module_get_function(&from_module, module, "reduce_partial") == CUDA_ERROR_INVALID_HANDLE);
  CHECK(api.launch(function, 1, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(fake.counters().kernels_launched == 2);
}

TEST_CASE(
    "fake cuda library: a bad image loads with CUDA_SUCCESS and fails at cuLibraryGetKernel as cuModuleLoadData would "
    "at the load",
    "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LibraryApi api(fake);
  const std::string bad_version = with_line_replaced(small_kernel_ptx(), ".version 9.0", ".version 9.9");
  const std::string sm100_ptx = ptx_for_target("sm_100");
  const Bytes sm80 = nvjitlink_cubin(ptx_for_target("sm_80"), "sm_80");
  const auto [what, code] = GENERATE(table<std::string, CUresult>({
      {"a cubin for sm_80", CUDA_ERROR_NO_BINARY_FOR_GPU},
      {"text that is not PTX", CUDA_ERROR_INVALID_IMAGE},
      {"PTX of ISA 9.9", CUDA_ERROR_UNSUPPORTED_PTX_VERSION},
      {"PTX for sm_100", CUDA_ERROR_INVALID_PTX},
  }));
  INFO(what);
  const void* image = what == "a cubin for sm_80"      ? static_cast<const void*>(sm80.data())
                      : what == "text that is not PTX" ? static_cast<const void*>("hello world")
                      : what == "PTX of ISA 9.9"       ? static_cast<const void*>(bad_version.c_str())
                                                       : static_cast<const void*>(sm100_ptx.c_str());
  CUmodule module = nullptr;
  REQUIRE(api.module_load_data(&module, image) == code);

  CUlibrary library = nullptr;
  REQUIRE(api.load(&library, image) == CUDA_SUCCESS);
  CHECK(library != nullptr);
  CUkernel kernel = nullptr;
  CHECK(api.get_kernel(&kernel, library, "reduce_partial") == code);
  unsigned count = 0;
  CHECK(api.kernel_count(&count, library) == code);
  CUkernel kernels[1] = {};
  CHECK(api.enumerate_kernels(kernels, 1, library) == code);
  CHECK(api.get_module(&module, library) == code);
  CHECK(api.unload(library) == CUDA_SUCCESS);
  CHECK(fake.counters().libraries_alive == 0);
}

TEST_CASE("fake cuda library: PTX and fat binaries, container or wrapper, are JIT-compiled at the load and counted",
          "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LibraryApi api(fake);
  const std::string ptx = small_kernel_ptx();
  const Bytes fat = fat_binary({FatEntry{1, 90, false, 9, 0, ptx_bytes(ptx)}});
  const FatbinWrapper wrapper{static_cast<int>(0x466243B1), 1, fat.data(), nullptr};
  for (const void* image : {static_cast<const void*>(ptx.c_str()), static_cast<const void*>(fat.data()),
                            static_cast<const void*>(&wrapper)}) {
    CUlibrary library = nullptr;
    REQUIRE(api.load(&library, image) == CUDA_SUCCESS);
    CUkernel kernel = nullptr;
    CHECK(api.get_kernel(&kernel, library, "reduce_partial") == CUDA_SUCCESS);
    REQUIRE(api.unload(library) == CUDA_SUCCESS);
  }
  const fake_cuda_counters counters = fake.counters();
  CHECK(counters.load_calls.library_load_data == 3);
  CHECK(counters.ptx_jit_compiles == 3);
  CHECK(counters.fatbin_loads == 2);
  CHECK(counters.module_load_calls == 0);
  CHECK(counters.cubin_loads_ok == 0);
}

TEST_CASE("fake cuda library: JIT options work as for cuModuleLoadDataEx and the error log comes back at the load",
          "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LibraryApi api(fake);
  const std::string garbage = ".version 9.0\n.target sm_90\n.address_size 64\n\nthis is not an instruction;\n";
  std::vector<char> log(4096, 'x');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_OPTIMIZATION_LEVEL};
  void* values[] = {log.data(), reinterpret_cast<void*>(std::uintptr_t{4096}), reinterpret_cast<void*>(2)};
  CUlibrary library = nullptr;
  REQUIRE(api.load_data(&library, garbage.c_str(), options, values, 3, nullptr, nullptr, 0) == CUDA_SUCCESS);
  const std::string text(log.data());
  CHECK_FALSE(text.empty());
  CHECK(reinterpret_cast<std::uintptr_t>(values[1]) == text.size());
  CUkernel kernel = nullptr;
  CHECK(api.get_kernel(&kernel, library, "reduce_partial") == CUDA_ERROR_INVALID_PTX);
  CHECK(fake.counters().ptx_jit_failures == 1);
  REQUIRE(api.unload(library) == CUDA_SUCCESS);

  SECTION("an option the driver does not know is refused at the call") {
    CUjit_option unknown = static_cast<CUjit_option>(CU_JIT_NUM_OPTIONS);
    void* value = nullptr;
    CHECK(api.load_data(&library, small_kernel_ptx().c_str(), &unknown, &value, 1, nullptr, nullptr, 0) ==
          CUDA_ERROR_INVALID_VALUE);
    CUlibraryOption library_option = CU_LIBRARY_NUM_OPTIONS;
    CHECK(api.load_data(&library, small_kernel_ptx().c_str(), nullptr, nullptr, 0, &library_option, &value, 1) ==
          CUDA_ERROR_INVALID_VALUE);
    CHECK(fake.counters().libraries_alive == 0);
  }
  SECTION("the host table option is accepted") {
    CUlibraryHostUniversalFunctionAndDataTable table{};
    CUlibraryOption library_option = CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE;
    void* value = &table;
    REQUIRE(api.load_data(&library, small_kernel_ptx().c_str(), nullptr, nullptr, 0, &library_option, &value, 1) ==
            CUDA_SUCCESS);
    CHECK(api.get_kernel(&kernel, library, "reduce_partial") == CUDA_SUCCESS);
    REQUIRE(api.unload(library) == CUDA_SUCCESS);
  }
}

TEST_CASE("fake cuda library: without BINARY_IS_PRESERVED the image may change or go once cuLibraryLoadData returned",
          "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LibraryApi api(fake);
  const Bytes cubin = nvjitlink_cubin(small_kernel_ptx(), "sm_90");
  GuardedImage image(cubin);
  CUlibrary library = nullptr;
  REQUIRE(api.load(&library, image.data(), false) == CUDA_SUCCESS);
  image.mutable_data()[100] = static_cast<std::byte>(~static_cast<unsigned>(image.mutable_data()[100]));
  CUkernel kernel = nullptr;
  CHECK(api.get_kernel(&kernel, library, "reduce_partial") == CUDA_SUCCESS);
  image.revoke();
  CHECK(api.get_kernel(&kernel, library, "reduce_partial") == CUDA_SUCCESS);
  CHECK(api.unload(library) == CUDA_SUCCESS);
  CHECK(fake.counters().preserved_image_violations == 0);
}

TEST_CASE(
    "fake cuda library: with BINARY_IS_PRESERVED an image kept as it was until cuLibraryUnload serves every call, and "
    "NULL option values are accepted",
    "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LibraryApi api(fake);
  const std::string ptx = small_kernel_ptx();
  const Bytes cubin = nvjitlink_cubin(ptx, "sm_90");
  const Bytes fat = fat_binary({FatEntry{1, 90, false, 9, 0, ptx_bytes(ptx)}});
  const FatbinWrapper wrapper{static_cast<int>(0x466243B1), 1, fat.data(), nullptr};
  for (const void* image : {static_cast<const void*>(cubin.data()), static_cast<const void*>(ptx.c_str()),
                            static_cast<const void*>(&wrapper)}) {
    CUlibrary library = nullptr;
    REQUIRE(api.load(&library, image, true) == CUDA_SUCCESS);
    CUkernel kernel = nullptr;
    CHECK(api.get_kernel(&kernel, library, "reduce_partial") == CUDA_SUCCESS);
    CUfunction function = nullptr;
    CHECK(api.kernel_function(&function, kernel) == CUDA_SUCCESS);
    CUmodule module = nullptr;
    CHECK(api.get_module(&module, library) == CUDA_SUCCESS);
    CHECK(api.unload(library) == CUDA_SUCCESS);
  }
  CHECK(fake.counters().preserved_image_violations == 0);
}

TEST_CASE(
    "fake cuda library: with BINARY_IS_PRESERVED a changed image makes every later call CUDA_ERROR_ILLEGAL_STATE and "
    "warns once",
    "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LibraryApi api(fake);
  const std::string ptx = small_kernel_ptx();
  Bytes fat = fat_binary({FatEntry{1, 90, false, 9, 0, ptx_bytes(ptx)}});
  const FatbinWrapper wrapper{static_cast<int>(0x466243B1), 1, fat.data(), nullptr};
  const Bytes cubin = nvjitlink_cubin(ptx, "sm_90");
  GuardedImage guarded(cubin);

  const std::string which = GENERATE("cubin", "container behind a wrapper");
  INFO(which);
  const void* image = which == "cubin" ? guarded.data() : static_cast<const void*>(&wrapper);
  CUlibrary library = nullptr;
  REQUIRE(api.load(&library, image, true) == CUDA_SUCCESS);
  CUkernel kernel = nullptr;
  REQUIRE(api.get_kernel(&kernel, library, "reduce_partial") == CUDA_SUCCESS);
  if (which == "cubin") {
    guarded.mutable_data()[100] ^= std::byte{0x5a};
  } else {
    fat.back() ^= std::byte{0x5a};
  }

  StderrCapture captured;
  CHECK(api.get_kernel(&kernel, library, "reduce_partial") == CUDA_ERROR_ILLEGAL_STATE);
  CUmodule module = nullptr;
  CHECK(api.get_module(&module, library) == CUDA_ERROR_ILLEGAL_STATE);
  CUfunction function = nullptr;
  CHECK(api.kernel_function(&function, kernel) == CUDA_ERROR_ILLEGAL_STATE);
  CHECK(api.unload(library) == CUDA_ERROR_ILLEGAL_STATE);
  const std::string warnings = captured.text();
  INFO(warnings);
  CHECK(count_of(warnings, "fake_cuda: ") == 1);
  CHECK(warnings.find("CU_LIBRARY_BINARY_IS_PRESERVED") != std::string::npos);
  CHECK(warnings.find("changed") != std::string::npos);

  const fake_cuda_counters counters = fake.counters();
  CHECK(counters.preserved_image_violations == 4);
  CHECK(counters.libraries_alive == 0);  // unloaded all the same
  CHECK(api.unload(library) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE(
    "fake cuda library: with BINARY_IS_PRESERVED an image unmapped before cuLibraryUnload is CUDA_ERROR_ILLEGAL_STATE, "
    "never a crash",
    "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LibraryApi api(fake);
  const Bytes cubin = nvjitlink_cubin(small_kernel_ptx(), "sm_90");
  GuardedImage image(cubin);
  CUlibrary library = nullptr;
  REQUIRE(api.load(&library, image.data(), true) == CUDA_SUCCESS);
  image.revoke();
  StderrCapture captured;
  CUkernel kernel = nullptr;
  CHECK(api.get_kernel(&kernel, library, "reduce_partial") == CUDA_ERROR_ILLEGAL_STATE);
  CHECK(api.unload(library) == CUDA_ERROR_ILLEGAL_STATE);
  CHECK(captured.text().find("no longer readable") != std::string::npos);
  CHECK(fake.counters().libraries_alive == 0);
}

TEST_CASE(
    "fake cuda library: cuLibraryLoadFromFile loads a file, answers 301 for a missing one and refuses "
    "BINARY_IS_PRESERVED",
    "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LibraryApi api(fake);
  const TempDir dir("fake-cuda-library-file");
  const std::string path = dir.file("kernel.ptx");
  jitcache::testing::write_file(path, small_kernel_ptx());
  CUlibrary library = nullptr;
  REQUIRE(api.load_from_file(&library, path.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS);
  CUkernel kernel = nullptr;
  CHECK(api.get_kernel(&kernel, library, "reduce_partial") == CUDA_SUCCESS);
  REQUIRE(api.unload(library) == CUDA_SUCCESS);

  // A file of garbage loads too, and fails where a bad image fails.
  const std::string garbage = dir.file("garbage.bin");
  jitcache::testing::write_file(garbage, "hello world");
  REQUIRE(api.load_from_file(&library, garbage.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS);
  CHECK(api.get_kernel(&kernel, library, "reduce_partial") == CUDA_ERROR_INVALID_IMAGE);
  REQUIRE(api.unload(library) == CUDA_SUCCESS);

  CHECK(api.load_from_file(&library, dir.file("missing.ptx").c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0) ==
        CUDA_ERROR_FILE_NOT_FOUND);
  CUlibraryOption preserved = CU_LIBRARY_BINARY_IS_PRESERVED;
  CHECK(api.load_from_file(&library, path.c_str(), nullptr, nullptr, 0, &preserved, nullptr, 1) ==
        CUDA_ERROR_INVALID_VALUE);
  const fake_cuda_counters counters = fake.counters();
  CHECK(counters.load_calls.library_load_from_file == 4);
  CHECK(counters.ptx_jit_compiles == 1);
  CHECK(counters.libraries_alive == 0);
}

TEST_CASE("fake cuda library: the load_library failure point fails the load call itself", "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LibraryApi api(fake);
  REQUIRE(fake.set_failure("load_library", CUDA_ERROR_OUT_OF_MEMORY, 1) == 0);
  CUlibrary library = nullptr;
  CHECK(api.load(&library, small_kernel_ptx().c_str()) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(fake.counters().ptx_jit_compiles == 0);
  REQUIRE(api.load(&library, small_kernel_ptx().c_str()) == CUDA_SUCCESS);
  CHECK(api.unload(library) == CUDA_SUCCESS);
  CHECK(api.load(nullptr, small_kernel_ptx().c_str()) == CUDA_ERROR_INVALID_VALUE);
  CHECK(api.load(&library, nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(fake.counters().injected_failures == 1);
}

#else

TEST_CASE("fake cuda library: skipped where the fake is not built", "[fake_cuda]") {
  JITCACHE_MARK_SKIPPED("the fake CUDA driver needs the CUDA toolkit and nvJitLink at build time");
}

#endif
