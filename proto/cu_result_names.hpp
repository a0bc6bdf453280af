// The CUresult values jitcache names, in one table that the client (messages: "CUDA_ERROR_INVALID_PTX
// (218)"), the daemon (load failures counted by CUresult for the metrics endpoint) and the fake
// driver (cuGetErrorName / cuGetErrorString, tests/fakes/fake_cuda/) all read. It lives in proto
// because the daemon has no cuda.h and gets a CUresult only as a number in REPORT_FAILURE.
//
// The numbers are cuda.h's (a CUresult number never changes meaning; tests/unit/
// test_proto_cu_result_names.cpp checks each against cuda.h), the descriptions the driver's own
// cuGetErrorString texts. Which of them a load can return, and what each means for the cache:
// docs/driver-facts.md §4. Thread safety: constant data and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace jitcache::proto {

struct CuResultName {
  std::uint32_t code;
  std::string_view name;
  std::string_view description;  // what cuGetErrorString says
  // A module load can return it, so the daemon counts REPORT_FAILUREs of this code on their own
  // (jitcache_load_failures_total{cu_result,name}); any other code counts as "other". Rationale:
  // the cu_result is the client's word, and a label value per number a client sends would let any
  // client grow the exposition without limit. Never turned off for a code once on: that label is
  // what dashboards and alerts select by.
  bool load_failure;
};

// Sorted by code.
inline constexpr std::array<CuResultName, 37> k_cu_result_names{{
    {0, "CUDA_SUCCESS", "no error", false},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument", true},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory", true},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error", true},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down", true},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library", true},
    {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", "the call requires a newer driver", false},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected", true},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal", true},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid", true},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context", true},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device", true},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed", true},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "PTX JIT compiler library not found", true},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain.", true},
    {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED", "PTX JIT compilation was disabled", true},
    {224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", "the provided execution affinity is not supported", true},
    {225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", "the provided PTX contains unsupported call to cudaDeviceSynchronize",
     true},
    {300, "CUDA_ERROR_INVALID_SOURCE", "device kernel image is invalid", true},
    {301, "CUDA_ERROR_FILE_NOT_FOUND", "file not found", true},
    {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", "shared object symbol not found", true},
    {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", "shared object initialization failed", true},
    {304, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS", true},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle", true},
    {401, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state", false},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found", true},
    {600, "CUDA_ERROR_NOT_READY", "device not ready", false},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered", false},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch", false},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure", false},
    {800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted", false},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported", true},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized", false},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination", true},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted on non supported HW", true},
    {909, "CUDA_ERROR_TIMEOUT", "wait operation timed out", false},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error", true},
}};

// The row of `code`; null for a code outside the table.
const CuResultName* find_cu_result(std::uint32_t code);

}  // namespace jitcache::proto
