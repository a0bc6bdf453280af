// The ABI names the fake exports that cuda.h does not declare as such.
//
// cuda.h maps some names to versioned symbols (cuLinkCreate → cuLinkCreate_v2, cuLinkAddFile →
// cuLinkAddFile_v2, cuGetProcAddress → cuGetProcAddress_v2); libcuda exports both the plain and the
// versioned names (docs/driver-facts.md §1), and the per-thread-stream ABIs (cuLaunchKernel_ptsz),
// which cuda.h declares only for CUDA_API_PER_THREAD_DEFAULT_STREAM builds. Including this header
// undoes the macros and declares the rest, so the export files can define every name. Which symbols
// leave the library is decided by fake_cuda.map.
// Thread safety: declarations only.
#pragma once

#include <cuda.h>

#undef cuLinkCreate
#undef cuLinkAddData
#undef cuLinkAddFile
#undef cuGetProcAddress

extern "C" {

CUresult CUDAAPI cuLinkCreate(unsigned int count, CUjit_option* options, void** values, CUlinkState* state);
CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                               unsigned int count, CUjit_option* options, void** values);
CUresult CUDAAPI cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path, unsigned int count,
                               CUjit_option* options, void** values);
CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags);
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                                     unsigned int block_x, unsigned int block_y, unsigned int block_z,
                                     unsigned int shared_mem_bytes, CUstream stream, void** kernel_params,
                                     void** extra);

}  // extern "C"
