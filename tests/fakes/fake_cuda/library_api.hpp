// cuLibraryLoadData, cuLibraryLoadFromFile and cuLibraryUnload as the driver behaves
// (docs/driver-facts.md §0.2, §6).
//
// Arguments and options are checked at the call: a NULL handle slot or image, an unknown JIT or
// library option, CU_LIBRARY_BINARY_IS_PRESERVED given to cuLibraryLoadFromFile (§6) →
// CUDA_ERROR_INVALID_VALUE; a file that cannot be read → CUDA_ERROR_FILE_NOT_FOUND [I]; an injected
// load_library failure → its code. Then the image goes through image_loader as for cuModuleLoadData
// (cubin checks, PTX and fat binaries JIT-compiled at the call, the JIT options honoured and the logs
// written) and the call returns CUDA_SUCCESS whatever the image was: a bad one's CUresult waits in the
// library for cuLibraryGetKernel and the other calls that read it (library_registry.hpp).
// [I] The fake JITs at the call under LAZY loading too; the driver's own LAZY mode defers putting
// kernels on the GPU, which the fake does not model.
// Without CU_LIBRARY_BINARY_IS_PRESERVED the fake works from its own copy, as the driver does; with
// it, it watches the caller's bytes until cuLibraryUnload (preserved_image.hpp).
// Thread safety: any thread.
#pragma once

#include <cuda.h>

namespace jitcache::fakes::fake_cuda {

CUresult library_load_data(CUlibrary* library, const void* code, CUjit_option* jit_options, void** jit_values,
                           unsigned jit_count, CUlibraryOption* library_options, void** library_values,
                           unsigned library_count);
CUresult library_load_from_file(CUlibrary* library, const char* path, CUjit_option* jit_options, void** jit_values,
                                unsigned jit_count, CUlibraryOption* library_options, void** library_values,
                                unsigned library_count);
CUresult library_unload(CUlibrary library);

}  // namespace jitcache::fakes::fake_cuda
