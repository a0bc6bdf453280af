// cuGetErrorName / cuGetErrorString: the name and a description of each CUresult the fake can return
// or a test can inject, from jitcache's one CUresult table (proto/cu_result_names.hpp: every code in
// docs/driver-facts.md §4, plus the common ones around them).
//
// Unknown codes are CUDA_ERROR_INVALID_VALUE with the string set to NULL, as the driver does.
// Thread safety: pure functions over a constant table; the strings are static.
#pragma once

#include <cuda.h>

namespace jitcache::fakes::fake_cuda {

CUresult error_name(CUresult code, const char** name);
CUresult error_string(CUresult code, const char** description);

}  // namespace jitcache::fakes::fake_cuda
