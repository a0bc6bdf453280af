#include <tests/fakes/fake_cuda/error_names.hpp>

#include <array>

namespace jitcache::fakes::fake_cuda {
namespace {

struct ErrorText {
  CUresult code;
  const char* name;
  const char* description;
};

#define FAKE_CUDA_ERROR(code, text) ErrorText{code, #code, text}

constexpr std::array k_errors = {
    FAKE_CUDA_ERROR(CUDA_SUCCESS, "no error"),
    FAKE_CUDA_ERROR(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    FAKE_CUDA_ERROR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    FAKE_CUDA_ERROR(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    FAKE_CUDA_ERROR(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
    FAKE_CUDA_ERROR(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"),
    FAKE_CUDA_ERROR(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "the call requires a newer driver"),
    FAKE_CUDA_ERROR(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
    FAKE_CUDA_ERROR(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    FAKE_CUDA_ERROR(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
    FAKE_CUDA_ERROR(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    FAKE_CUDA_ERROR(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"),
    FAKE_CUDA_ERROR(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
    FAKE_CUDA_ERROR(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "PTX JIT compiler library not found"),
    FAKE_CUDA_ERROR(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the provided PTX was compiled with an unsupported toolchain."),
    FAKE_CUDA_ERROR(CUDA_ERROR_JIT_COMPILATION_DISABLED, "PTX JIT compilation was disabled"),
    FAKE_CUDA_ERROR(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, "the provided execution affinity is not supported"),
    FAKE_CUDA_ERROR(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, "the provided PTX contains unsupported call to cudaDeviceSynchronize"),
    FAKE_CUDA_ERROR(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"),
    FAKE_CUDA_ERROR(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
    FAKE_CUDA_ERROR(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "shared object symbol not found"),
    FAKE_CUDA_ERROR(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object initialization failed"),
    FAKE_CUDA_ERROR(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed or operation not supported on this OS"),
    FAKE_CUDA_ERROR(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
    FAKE_CUDA_ERROR(CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state"),
    FAKE_CUDA_ERROR(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    FAKE_CUDA_ERROR(CUDA_ERROR_NOT_READY, "device not ready"),
    FAKE_CUDA_ERROR(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
    FAKE_CUDA_ERROR(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"),
    FAKE_CUDA_ERROR(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
    FAKE_CUDA_ERROR(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
    FAKE_CUDA_ERROR(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
    FAKE_CUDA_ERROR(CUDA_ERROR_SYSTEM_NOT_READY, "system not yet initialized"),
    FAKE_CUDA_ERROR(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system has unsupported display driver / cuda driver combination"),
    FAKE_CUDA_ERROR(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "forward compatibility was attempted on non supported HW"),
    FAKE_CUDA_ERROR(CUDA_ERROR_TIMEOUT, "wait operation timed out"),
    FAKE_CUDA_ERROR(CUDA_ERROR_UNKNOWN, "unknown error"),
};

#undef FAKE_CUDA_ERROR

const ErrorText* find(CUresult code) {
  for (const ErrorText& error : k_errors) {
    if (error.code == code) return &error;
  }
  return nullptr;
}

}  // namespace

CUresult error_name(CUresult code, const char** name) {
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* error = find(code);
  *name = error != nullptr ? error->name : nullptr;
  return error != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult error_string(CUresult code, const char** description) {
  if (description == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* error = find(code);
  *description = error != nullptr ? error->description : nullptr;
  return error != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

}  // namespace jitcache::fakes::fake_cuda
