#include <tests/fakes/fake_cuda/library_options.hpp>

namespace jitcache::fakes::fake_cuda {

CUresult parse_library_options(unsigned count, const CUlibraryOption* options, void* const* /*values*/,
                               LibraryRequest& out) {
  if (count != 0 && options == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < count; ++i) {
    switch (options[i]) {
      case CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE: break;
      case CU_LIBRARY_BINARY_IS_PRESERVED: out.binary_is_preserved = true; break;
      default: return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}

}  // namespace jitcache::fakes::fake_cuda
