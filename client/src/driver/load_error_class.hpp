// What a CUresult from a load or a JIT means for the cache: the one table of "this image is bad,
// rebuild" codes (conventions: one table in one place), and the stage of the load walk each belongs
// to (docs/client-guide.md §6; docs/driver-facts.md §4 has the observations behind each row).
// Thread safety: pure functions.
#pragma once

#include <cuda.h>

namespace jitcache::client::driver {

enum class LoadErrorClass {
  none,        // CUDA_SUCCESS
  bad_image,   // this image cannot be used here: report it and rebuild from the PTX
  cannot_jit,  // this environment cannot JIT (no JIT compiler, JIT disabled)
  resource,    // memory, context or other state of the caller: give it back unchanged
  other,       // anything else: give it back unchanged
};

// 200 INVALID_IMAGE, 209 NO_BINARY_FOR_GPU, 218 INVALID_PTX, 222 UNSUPPORTED_PTX_VERSION and
// 302 SHARED_OBJECT_SYMBOL_NOT_FOUND are bad_image; 221 and 223 cannot_jit; 2 OUT_OF_MEMORY,
// 201 INVALID_CONTEXT, 3/4 NOT_INITIALIZED/DEINITIALIZED and 999 UNKNOWN resource.
LoadErrorClass classify_load_error(CUresult result);

// The stage of the load walk a failure with this code belongs to, as jitcache_load_stage numbers
// it: 209 → image (no image for this device), 222 → ptx_version, 218/221/223/300 → jit, everything
// else → load (relocation or resources).
int stage_of(CUresult result);

}  // namespace jitcache::client::driver
