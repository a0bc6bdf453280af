// The CUlibraryOption arrays of cuLibraryLoadData / cuLibraryLoadFromFile (docs/driver-facts.md §6):
// CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE (0) is accepted and changes nothing the fake
// models (it has no host function table); CU_LIBRARY_BINARY_IS_PRESERVED (1) is on by being present,
// whatever its value, and the value array may be NULL, as programs pass it [I: how the driver reads
// the value is not documented]. Other numbers are CUDA_ERROR_INVALID_VALUE.
// Thread safety: a pure function.
#pragma once

#include <cuda.h>

namespace jitcache::fakes::fake_cuda {

struct LibraryRequest {
  bool binary_is_preserved = false;
};

CUresult parse_library_options(unsigned count, const CUlibraryOption* options, void* const* values,
                               LibraryRequest& out);

}  // namespace jitcache::fakes::fake_cuda
