// What the fake CUDA driver tells a test about the calls it got: fake_cuda_last_image gives the kind,
// size and SHA-256 of exactly the bytes the last load entry point was handed (so a test can prove a
// cubin reached the driver byte for byte), and the counters count each load entry point, the JIT's
// compiles and the launches, from any number of threads.
#include <catch2/catch.hpp>

#include <tests/support/test_skip.hpp>

#if defined(JITCACHE_FAKE_CUDA_DRIVER)

#include <tests/support/fake_cuda_handle.hpp>
#include <tests/support/fake_cuda_images.hpp>
#include <tests/support/temp_dir.hpp>

#include <proto/digest.hpp>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace jitcache::testing::fake_cuda;
namespace proto = jitcache::proto;

std::string sha256_hex(const void* data, std::size_t size) {
  return proto::to_hex(proto::sha256(proto::Bytes(static_cast<const std::uint8_t*>(data), size)));
}

fake_cuda_image_info last_image(const FakeCudaHandle& fake) {
  fake_cuda_image_info info{};
  REQUIRE(fake.last_image(info) == 0);
  return info;
}

void check_image(const fake_cuda_image_info& info, const std::string& entry_point, int kind, const void* data,
                 std::size_t size) {
  INFO(entry_point);
  CHECK(std::string(info.entry_point) == entry_point);
  CHECK(info.kind == kind);
  CHECK(info.complete == 1);
  CHECK(info.size == size);
  const std::string expected = sha256_hex(data, size);
  CHECK(std::string(info.sha256_hex) == expected);
  CHECK(proto::to_hex(proto::Bytes(info.sha256, sizeof(info.sha256))) == expected);
}

struct LoadApi {
  PFN_cuModuleLoadData_v2000 load_data;
  PFN_cuModuleLoadDataEx_v2010 load_data_ex;
  PFN_cuModuleLoad_v2000 load_file;
  PFN_cuModuleLoadFatBinary_v2000 load_fat_binary;
  PFN_cuModuleUnload_v2000 unload;
  PFN_cuLibraryLoadData_v12000 library_load_data;
  PFN_cuLibraryLoadFromFile_v12000 library_load_from_file;
  PFN_cuLibraryUnload_v12000 library_unload;

  explicit LoadApi(const FakeCudaHandle& fake)
      : load_data(fake.entry<PFN_cuModuleLoadData_v2000>("cuModuleLoadData", 2000)),
        load_data_ex(fake.entry<PFN_cuModuleLoadDataEx_v2010>("cuModuleLoadDataEx", 2010)),
        load_file(fake.entry<PFN_cuModuleLoad_v2000>("cuModuleLoad", 2000)),
        load_fat_binary(fake.entry<PFN_cuModuleLoadFatBinary_v2000>("cuModuleLoadFatBinary", 2000)),
        unload(fake.entry<PFN_cuModuleUnload_v2000>("cuModuleUnload", 2000)),
        library_load_data(fake.entry<PFN_cuLibraryLoadData_v12000>("cuLibraryLoadData", 12000)),
        library_load_from_file(fake.entry<PFN_cuLibraryLoadFromFile_v12000>("cuLibraryLoadFromFile", 12000)),
        library_unload(fake.entry<PFN_cuLibraryUnload_v12000>("cuLibraryUnload", 12000)) {}
};

}  // namespace

TEST_CASE(
    "fake cuda observability: the last image is the SHA-256 and size of exactly the cubin handed to each load entry "
    "point",
    "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LoadApi api(fake);
  fake_cuda_image_info info{};
  CHECK(fake.last_image(info) == -1);
  CHECK(info.kind == FAKE_CUDA_IMAGE_NONE);

  const Bytes cubin = nvjitlink_cubin(small_kernel_ptx(), "sm_90");
  CUmodule module = nullptr;
  REQUIRE(api.load_data(&module, cubin.data()) == CUDA_SUCCESS);
  REQUIRE(api.unload(module) == CUDA_SUCCESS);
  check_image(last_image(fake), "cuModuleLoadData", FAKE_CUDA_IMAGE_CUBIN, cubin.data(), cubin.size());
  CHECK(last_image(fake).sequence == 1);

  REQUIRE(api.load_data_ex(&module, cubin.data(), 0, nullptr, nullptr) == CUDA_SUCCESS);
  REQUIRE(api.unload(module) == CUDA_SUCCESS);
  check_image(last_image(fake), "cuModuleLoadDataEx", FAKE_CUDA_IMAGE_CUBIN, cubin.data(), cubin.size());

  REQUIRE(api.load_fat_binary(&module, cubin.data()) == CUDA_SUCCESS);
  REQUIRE(api.unload(module) == CUDA_SUCCESS);
  check_image(last_image(fake), "cuModuleLoadFatBinary", FAKE_CUDA_IMAGE_CUBIN, cubin.data(), cubin.size());

  CUlibrary library = nullptr;
  REQUIRE(api.library_load_data(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS);
  REQUIRE(api.library_unload(library) == CUDA_SUCCESS);
  check_image(last_image(fake), "cuLibraryLoadData", FAKE_CUDA_IMAGE_CUBIN, cubin.data(), cubin.size());
  CHECK(last_image(fake).sequence == 4);

  // One byte different is another digest: the record is of these bytes, not of "a cubin".
  Bytes other = cubin;
  other[other.size() / 2] ^= std::byte{1};
  const CUresult result = api.load_data(&module, other.data());
  if (result == CUDA_SUCCESS) REQUIRE(api.unload(module) == CUDA_SUCCESS);
  CHECK(std::string(last_image(fake).sha256_hex) != sha256_hex(cubin.data(), cubin.size()));

  fake.reset_counters();
  CHECK(fake.last_image(info) == -1);
}

TEST_CASE(
    "fake cuda observability: PTX is recorded without its NUL, a fat binary wrapper as the container it points at, a "
    "file as its bytes",
    "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LoadApi api(fake);
  const std::string ptx = small_kernel_ptx();
  CUmodule module = nullptr;
  REQUIRE(api.load_data(&module, ptx.c_str()) == CUDA_SUCCESS);
  REQUIRE(api.unload(module) == CUDA_SUCCESS);
  check_image(last_image(fake), "cuModuleLoadData", FAKE_CUDA_IMAGE_PTX, ptx.data(), ptx.size());

  const Bytes fat = fat_binary({FatEntry{1, 90, false, 9, 0, ptx_bytes(ptx)}});
  const FatbinWrapper wrapper{static_cast<int>(0x466243B1), 1, fat.data(), nullptr};
  CUlibrary library = nullptr;
  REQUIRE(api.library_load_data(&library, &wrapper, nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS);
  REQUIRE(api.library_unload(library) == CUDA_SUCCESS);
  check_image(last_image(fake), "cuLibraryLoadData", FAKE_CUDA_IMAGE_FATBIN, fat.data(), fat.size());
  CHECK(last_image(fake).fatbin_wrapper == 1);
  REQUIRE(api.load_data(&module, fat.data()) == CUDA_SUCCESS);
  REQUIRE(api.unload(module) == CUDA_SUCCESS);
  CHECK(last_image(fake).fatbin_wrapper == 0);

  const jitcache::testing::TempDir dir("fake-cuda-last-image");
  const Bytes cubin = nvjitlink_cubin(ptx, "sm_90");
  // Bytes after the ELF's end are part of the file, and so of what cuModuleLoad was handed.
  std::string file_bytes(reinterpret_cast<const char*>(cubin.data()), cubin.size());
  file_bytes += "trailing";
  const std::string path = dir.file("kernel.cubin");
  jitcache::testing::write_file(path, file_bytes);
  REQUIRE(api.load_file(&module, path.c_str()) == CUDA_SUCCESS);
  REQUIRE(api.unload(module) == CUDA_SUCCESS);
  check_image(last_image(fake), "cuModuleLoad", FAKE_CUDA_IMAGE_CUBIN, file_bytes.data(), file_bytes.size());
  REQUIRE(api.library_load_from_file(&library, path.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS);
  REQUIRE(api.library_unload(library) == CUDA_SUCCESS);
  check_image(last_image(fake), "cuLibraryLoadFromFile", FAKE_CUDA_IMAGE_CUBIN, file_bytes.data(), file_bytes.size());
}

TEST_CASE("fake cuda observability: an image that cannot be read whole is recorded as incomplete", "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LoadApi api(fake);
  const Bytes cubin = nvjitlink_cubin(small_kernel_ptx(), "sm_90");
  GuardedImage truncated(std::span(cubin.data(), cubin.size() / 2));
  CUmodule module = nullptr;
  CHECK(api.load_data(&module, truncated.data()) == CUDA_ERROR_INVALID_IMAGE);
  fake_cuda_image_info info = last_image(fake);
  CHECK(info.kind == FAKE_CUDA_IMAGE_CUBIN);
  CHECK(info.complete == 0);
  CHECK(info.size == 0);
  CHECK(std::string(info.sha256_hex).empty());

  GuardedImage unreadable(cubin);
  unreadable.revoke();
  CUlibrary library = nullptr;
  REQUIRE(api.library_load_data(&library, unreadable.data(), nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS);
  info = last_image(fake);
  CHECK(info.kind == FAKE_CUDA_IMAGE_NONE);
  CHECK(info.complete == 0);
  CHECK(std::string(info.entry_point) == "cuLibraryLoadData");
  REQUIRE(api.library_unload(library) == CUDA_SUCCESS);
}

TEST_CASE("fake cuda observability: each load entry point has its own count, and module_load_calls sums the modules'",
          "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const LoadApi api(fake);
  const std::string ptx = small_kernel_ptx();
  const jitcache::testing::TempDir dir("fake-cuda-load-calls");
  const std::string path = dir.file("kernel.ptx");
  jitcache::testing::write_file(path, ptx);
  fake.reset_counters();
  CUmodule module = nullptr;
  CUlibrary library = nullptr;
  REQUIRE(api.load_data(&module, ptx.c_str()) == CUDA_SUCCESS);
  REQUIRE(api.unload(module) == CUDA_SUCCESS);
  for (int i = 0; i < 2; ++i) {
    REQUIRE(api.load_data_ex(&module, ptx.c_str(), 0, nullptr, nullptr) == CUDA_SUCCESS);
    REQUIRE(api.unload(module) == CUDA_SUCCESS);
  }
  for (int i = 0; i < 3; ++i) {
    REQUIRE(api.load_file(&module, path.c_str()) == CUDA_SUCCESS);
    REQUIRE(api.unload(module) == CUDA_SUCCESS);
  }
  for (int i = 0; i < 4; ++i) CHECK(api.load_fat_binary(&module, "hello world") == CUDA_ERROR_INVALID_IMAGE);
  for (int i = 0; i < 5; ++i) {
    REQUIRE(api.library_load_data(&library, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS);
    REQUIRE(api.library_unload(library) == CUDA_SUCCESS);
  }
  for (int i = 0; i < 6; ++i) {
    REQUIRE(api.library_load_from_file(&library, path.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0) ==
            CUDA_SUCCESS);
    REQUIRE(api.library_unload(library) == CUDA_SUCCESS);
  }
  const fake_cuda_counters counters = fake.counters();
  CHECK(counters.load_calls.module_load_data == 1);
  CHECK(counters.load_calls.module_load_data_ex == 2);
  CHECK(counters.load_calls.module_load == 3);
  CHECK(counters.load_calls.module_load_fatbinary == 4);
  CHECK(counters.load_calls.library_load_data == 5);
  CHECK(counters.load_calls.library_load_from_file == 6);
  CHECK(counters.module_load_calls == 10);
  CHECK(counters.ptx_jit_compiles == 17);
  CHECK(counters.get_proc_address_calls == 0);  // every entry point was resolved before the reset
  CHECK(last_image(fake).sequence == 21);

  fake.reset_counters();
  const fake_cuda_counters zeroed = fake.counters();
  CHECK(zeroed.load_calls.library_load_from_file == 0);
  CHECK(zeroed.module_load_calls == 0);
}

TEST_CASE("fake cuda observability: libraries loaded, resolved and launched from many threads add up", "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const auto load = fake.entry<PFN_cuLibraryLoadData_v12000>("cuLibraryLoadData", 12000);
  const auto get_kernel = fake.entry<PFN_cuLibraryGetKernel_v12000>("cuLibraryGetKernel", 12000);
  const auto launch = fake.entry<PFN_cuLaunchKernel_v4000>("cuLaunchKernel", 4000);
  const auto unload = fake.entry<PFN_cuLibraryUnload_v12000>("cuLibraryUnload", 12000);
  const Bytes cubin = nvjitlink_cubin(small_kernel_ptx(), "sm_90");
  constexpr int k_threads = 4;
  constexpr int k_rounds = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < k_rounds; ++round) {
        CUlibrary library = nullptr;
        CUkernel kernel = nullptr;
        if (load(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0) != CUDA_SUCCESS ||
            get_kernel(&kernel, library, "reduce_partial") != CUDA_SUCCESS ||
            launch(reinterpret_cast<CUfunction>(kernel), 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr) !=
                CUDA_SUCCESS ||
            unload(library) != CUDA_SUCCESS) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(failures.load() == 0);
  const fake_cuda_counters counters = fake.counters();
  CHECK(counters.load_calls.library_load_data == k_threads * k_rounds);
  CHECK(counters.cubin_loads_ok == k_threads * k_rounds);
  CHECK(counters.kernels_launched == k_threads * k_rounds);
  CHECK(counters.libraries_alive == 0);
  fake_cuda_launch last{};
  REQUIRE(fake.last_launch(last) == 0);
  CHECK(std::string(last.kernel_name) == "reduce_partial");
}

TEST_CASE("fake cuda observability: every cuGetProcAddress call is counted, found or not", "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  CHECK(fake.get_proc_address()("cuModuleLoadData", &pfn, 13000, 0, &status) == CUDA_SUCCESS);
  CHECK(fake.get_proc_address()("cuFoo", &pfn, 13000, 0, &status) == CUDA_SUCCESS);
  const auto legacy = reinterpret_cast<PFN_cuGetProcAddress_v11030>(fake.symbol("cuGetProcAddress"));
  CHECK(legacy("cuFoo", &pfn, 13000, 0) == CUDA_ERROR_NOT_FOUND);
  CHECK(fake.counters().get_proc_address_calls == 3);
}

TEST_CASE(
    "fake cuda observability: with FAKE_CUDA_REPORT a process appends one JSON line at exit with its counters, last "
    "image and last launch",
    "[fake_cuda]") {
  const FakeCudaHandle& fake = fake_cuda();
  const auto load = fake.entry<PFN_cuLibraryLoadData_v12000>("cuLibraryLoadData", 12000);
  const auto get_kernel = fake.entry<PFN_cuLibraryGetKernel_v12000>("cuLibraryGetKernel", 12000);
  const auto launch = fake.entry<PFN_cuLaunchKernel_v4000>("cuLaunchKernel", 4000);
  const jitcache::testing::TempDir dir("fake-cuda-report");
  const std::string report = dir.file("report.jsonl");
  const std::string ptx = small_kernel_ptx();

  std::fflush(nullptr);  // nothing buffered before the fork is written twice
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child leaves through exit(), which runs the fake's exit handler.
    setenv("FAKE_CUDA_REPORT", report.c_str(), 1);
    fake.reload_environment();
    CUlibrary library = nullptr;
    CUkernel kernel = nullptr;
    if (load(&library, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0) != CUDA_SUCCESS ||
        get_kernel(&kernel, library, "reduce_partial") != CUDA_SUCCESS ||
        launch(reinterpret_cast<CUfunction>(kernel), 3, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr) != CUDA_SUCCESS) {
      _exit(3);
    }
    std::exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  // A process that never calls the driver reports too, all zeros (the fake preloaded into /bin/true).
  const pid_t idle = fork();
  REQUIRE(idle >= 0);
  if (idle == 0) {
    setenv("FAKE_CUDA_REPORT", report.c_str(), 1);
    setenv("LD_PRELOAD", JITCACHE_FAKE_CUDA_DRIVER, 1);
    execl("/bin/true", "true", static_cast<char*>(nullptr));
    _exit(127);
  }
  REQUIRE(waitpid(idle, &status, 0) == idle);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  std::istringstream lines(jitcache::testing::read_file(report));
  std::vector<nlohmann::json> records;
  for (std::string line; std::getline(lines, line);) records.push_back(nlohmann::json::parse(line));
  REQUIRE(records.size() == 2);
  const nlohmann::json& busy = records[0];
  INFO(busy.dump());
  CHECK(busy["pid"] == child);
  CHECK(busy["counters"]["load_calls"]["library_load_data"] == 1);
  CHECK(busy["counters"]["ptx_jit_compiles"] == 1);
  CHECK(busy["counters"]["kernels_launched"] == 1);
  CHECK(busy["counters"]["libraries_alive"] == 1);  // never unloaded
  CHECK(busy["last_image"]["kind"] == "ptx");
  CHECK(busy["last_image"]["entry_point"] == "cuLibraryLoadData");
  CHECK(busy["last_image"]["sha256"] == sha256_hex(ptx.data(), ptx.size()));
  CHECK(busy["last_launch"]["kernel_name"] == "reduce_partial");
  CHECK(busy["last_launch"]["grid"] == nlohmann::json::array({3, 1, 1}));
  CHECK(busy["last_launch"]["through_kernel_handle"] == true);
  const nlohmann::json& quiet = records[1];
  INFO(quiet.dump());
  CHECK(quiet["pid"] == idle);
  CHECK(quiet["counters"]["get_proc_address_calls"] == 0);
  CHECK(quiet["last_image"].is_null());
  CHECK(quiet["last_launch"].is_null());
}

#else

TEST_CASE("fake cuda observability: skipped where the fake is not built", "[fake_cuda]") {
  JITCACHE_MARK_SKIPPED("the fake CUDA driver needs the CUDA toolkit and nvJitLink at build time");
}

#endif
