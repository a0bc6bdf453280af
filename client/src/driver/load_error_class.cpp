#include <client/src/driver/load_error_class.hpp>

#include <jitcache/jitcache.h>
#include <proto/messages.hpp>

namespace jitcache::client::driver {

// The C API's load stages are the wire's (PROTOCOL.md §5 REPORT_FAILURE "Load stages"): a failure
// report casts one to the other.
static_assert(JITCACHE_STAGE_IMAGE == static_cast<int>(proto::FailureStage::image));
static_assert(JITCACHE_STAGE_PTX_VERSION == static_cast<int>(proto::FailureStage::ptx_version));
static_assert(JITCACHE_STAGE_JIT == static_cast<int>(proto::FailureStage::jit));
static_assert(JITCACHE_STAGE_LOAD == static_cast<int>(proto::FailureStage::load));

LoadErrorClass classify_load_error(CUresult result) {
  switch (result) {
    case CUDA_SUCCESS: return LoadErrorClass::none;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND: return LoadErrorClass::bad_image;
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_JIT_COMPILATION_DISABLED: return LoadErrorClass::cannot_jit;
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_UNKNOWN: return LoadErrorClass::resource;
    default: return LoadErrorClass::other;
  }
}

int stage_of(CUresult result) {
  switch (result) {
    case CUDA_SUCCESS: return JITCACHE_STAGE_NONE;
    case CUDA_ERROR_NO_BINARY_FOR_GPU: return JITCACHE_STAGE_IMAGE;
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return JITCACHE_STAGE_PTX_VERSION;
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    case CUDA_ERROR_INVALID_SOURCE: return JITCACHE_STAGE_JIT;
    default: return JITCACHE_STAGE_LOAD;
  }
}

}  // namespace jitcache::client::driver
