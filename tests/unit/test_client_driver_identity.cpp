// The driver facts the cache key rests on (client/src/driver): the build read from the loaded
// library's file name or /proc, the newest PTX ISA a driver JIT-compiles, the one table of load
// errors that mean "rebuild", and CUresult names in messages.
#include <client/src/driver/cu_result_text.hpp>
#include <client/src/driver/driver_api.hpp>
#include <client/src/driver/driver_identity.hpp>
#include <client/src/driver/load_error_class.hpp>

#include <jitcache/jitcache.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <tests/support/test_skip.hpp>

namespace drv = jitcache::client::driver;

TEST_CASE("driver identity: the build comes from the versioned file name of libcuda") {
  CHECK(drv::build_from_library_name("/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04") == "580.159.04");
  CHECK(drv::build_from_library_name("libcuda.so.999.0.1") == "999.0.1");
  CHECK_FALSE(drv::build_from_library_name("/usr/lib/x86_64-linux-gnu/libcuda.so.1").has_value());
  CHECK_FALSE(drv::build_from_library_name("/usr/lib/x86_64-linux-gnu/libcuda.so").has_value());
  CHECK_FALSE(drv::build_from_library_name("/opt/libfoo.so.580.159.04").has_value());
  CHECK_FALSE(drv::build_from_library_name("/usr/lib/libcuda.so.580.x").has_value());
}

TEST_CASE("driver identity: /proc/driver/nvidia/version gives the kernel module's build") {
  CHECK(drv::build_from_proc_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  "
                                     "Release Build  (dvs-builder@U22)  Thu Oct 30 2025\nGCC version: gcc 12") ==
        "580.159.04");
  CHECK_FALSE(drv::build_from_proc_version("no version here").has_value());
}

TEST_CASE("driver identity: the newest PTX ISA follows the driver's API version") {
  auto isa = [](int api) {
    auto v = drv::max_ptx_isa(api);
    return std::to_string(v.major) + "." + std::to_string(v.minor);
  };
  CHECK(isa(13000) == "9.0");
  CHECK(isa(13010) == "9.1");
  CHECK(isa(12090) == "8.8");
  CHECK(isa(12080) == "8.7");
  CHECK(isa(12060) == "8.5");  // 12.6 added no ISA: 8.5 came with 12.5, 8.6 with 12.7
  CHECK(isa(12000) == "8.0");
  CHECK(isa(11080) == "7.8");
  CHECK(isa(11000) == "7.0");
}

TEST_CASE("load errors: image errors rebuild, JIT-unavailable and resource errors do not") {
  using drv::LoadErrorClass;
  for (CUresult bad : {CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_INVALID_PTX,
                       CUDA_ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND}) {
    CHECK(drv::classify_load_error(bad) == LoadErrorClass::bad_image);
  }
  CHECK(drv::classify_load_error(CUDA_ERROR_JIT_COMPILER_NOT_FOUND) == LoadErrorClass::cannot_jit);
  CHECK(drv::classify_load_error(CUDA_ERROR_JIT_COMPILATION_DISABLED) == LoadErrorClass::cannot_jit);
  CHECK(drv::classify_load_error(CUDA_ERROR_OUT_OF_MEMORY) == LoadErrorClass::resource);
  CHECK(drv::classify_load_error(CUDA_ERROR_INVALID_CONTEXT) == LoadErrorClass::resource);
  CHECK(drv::classify_load_error(CUDA_SUCCESS) == LoadErrorClass::none);
}

TEST_CASE("load errors: each code names the stage of the load walk it belongs to") {
  CHECK(drv::stage_of(CUDA_ERROR_NO_BINARY_FOR_GPU) == JITCACHE_STAGE_IMAGE);
  CHECK(drv::stage_of(CUDA_ERROR_UNSUPPORTED_PTX_VERSION) == JITCACHE_STAGE_PTX_VERSION);
  CHECK(drv::stage_of(CUDA_ERROR_INVALID_PTX) == JITCACHE_STAGE_JIT);
  CHECK(drv::stage_of(CUDA_ERROR_JIT_COMPILATION_DISABLED) == JITCACHE_STAGE_JIT);
  CHECK(drv::stage_of(CUDA_ERROR_INVALID_IMAGE) == JITCACHE_STAGE_LOAD);
  CHECK(drv::stage_of(CUDA_ERROR_OUT_OF_MEMORY) == JITCACHE_STAGE_LOAD);
}

TEST_CASE("result text: a CUresult is named with its number") {
  CHECK(drv::describe_result(CUDA_ERROR_INVALID_PTX) == "CUDA_ERROR_INVALID_PTX (218)");
  CHECK(drv::describe_result(static_cast<CUresult>(12345)) == "CUDA_ERROR_UNKNOWN_CODE (12345)");
}

TEST_CASE("driver: a library that is not there is a clear error, not a crash") {
  auto opened = drv::open_driver("/nonexistent/libcuda.so.1");
  REQUIRE_FALSE(opened.ok());
  CHECK_THAT(opened.error().message, Catch::Contains("cannot open the CUDA driver"));
  CHECK_THAT(opened.error().message, Catch::Contains("/nonexistent/libcuda.so.1"));
}

TEST_CASE("driver: a library without cuGetProcAddress is refused by name") {
  auto opened = drv::open_driver("libz.so.1");
  REQUIRE_FALSE(opened.ok());
  CHECK_THAT(opened.error().message, Catch::Contains("has no cuGetProcAddress"));
}

TEST_CASE("driver: the toolkit's stub libcuda is recognised as not a driver") {
  const char* stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (std::getenv("JITCACHE_TEST_NO_STUB") != nullptr) JITCACHE_SKIP("JITCACHE_TEST_NO_STUB is set");
  auto opened = drv::open_driver(stub);
  if (opened.ok()) {
    JITCACHE_SKIP(stub << " behaved as a driver (a real driver is installed here?)");
  }
  INFO(opened.error().message);
  CHECK((opened.error().message.find("stub") != std::string::npos ||
         opened.error().message.find("cannot open") != std::string::npos));
}
