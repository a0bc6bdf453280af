// cuLinkCreate / cuLinkAddData / cuLinkComplete / cuLinkDestroy over LinkState, with the driver's
// argument checks and the link_* failure points.
//
// cuLinkCreate refuses CU_JIT_FALLBACK_STRATEGY with CUDA_ERROR_INVALID_VALUE, as the driver does
// (docs/driver-facts.md §1). cuLinkAddData's own options are checked and otherwise ignored: nvJitLink takes
// options per link, not per input. Inputs: PTX (compiled at once), CUBIN (validated first: 200 when
// malformed), FATBINARY, OBJECT and LIBRARY go to nvJitLink; NVVM is CUDA_ERROR_NOT_SUPPORTED.
// cuLinkAddFile reads the file (CUDA_ERROR_FILE_NOT_FOUND when it cannot, docs/driver-facts.md §1) and adds
// its bytes as cuLinkAddData would, named by its path; PTX read from a file is NUL-terminated by the
// fake, since files of PTX are not.
// Thread safety: any thread; one CUlinkState used by one thread at a time, as with the driver.
#pragma once

#include <cuda.h>

#include <cstddef>

namespace jitcache::fakes::fake_cuda {

CUresult link_create(unsigned option_count, CUjit_option* options, void** option_values, CUlinkState* state_out);
CUresult link_add_data(CUlinkState state, CUjitInputType type, void* data, std::size_t size, const char* name,
                       unsigned option_count, CUjit_option* options, void** option_values);
CUresult link_add_file(CUlinkState state, CUjitInputType type, const char* path, unsigned option_count,
                       CUjit_option* options, void** option_values);
CUresult link_complete(CUlinkState state, void** cubin_out, std::size_t* size_out);
CUresult link_destroy(CUlinkState state);

}  // namespace jitcache::fakes::fake_cuda
