#include <tests/fakes/fake_cudart/runtime_errors.hpp>

#include <array>

namespace jitcache::fakes::fake_cudart {
namespace {

struct ErrorText {
  cudaError_t code;
  const char* name;
  const char* description;
};

constexpr std::array k_errors = {
    ErrorText{cudaSuccess, "cudaSuccess", "no error"},
    ErrorText{cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    ErrorText{cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    ErrorText{cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
              "CUDA driver version is insufficient for CUDA runtime version"},
    ErrorText{cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    ErrorText{cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

constexpr const char* k_unrecognized = "unrecognized error code";

const ErrorText* find(cudaError_t error) {
  for (const ErrorText& row : k_errors) {
    if (row.code == error) return &row;
  }
  return nullptr;
}

}  // namespace

const char* runtime_error_name(cudaError_t error) {
  const ErrorText* row = find(error);
  return row != nullptr ? row->name : k_unrecognized;
}

const char* runtime_error_string(cudaError_t error) {
  const ErrorText* row = find(error);
  return row != nullptr ? row->description : k_unrecognized;
}

cudaError_t runtime_error_from_driver(int driver_result) {
  switch (driver_result) {
    case 0: return cudaSuccess;
    case 1: return cudaErrorInvalidValue;    // CUDA_ERROR_INVALID_VALUE
    case 801: return cudaErrorNotSupported;  // CUDA_ERROR_NOT_SUPPORTED
    default: return cudaErrorUnknown;
  }
}

}  // namespace jitcache::fakes::fake_cudart
