// cuLaunchKernel (and its per-thread-stream ABI cuLaunchKernel_ptsz): checks what the driver checks
// before a launch and records it instead of running anything (launch_record.hpp).
//
// `f` must be a CUfunction of a live module (cuModuleGetFunction, cuKernelGetFunction) or a CUkernel
// of a live library cast to CUfunction, which the driver allows → else CUDA_ERROR_INVALID_HANDLE.
// Both kernelParams and extra given → CUDA_ERROR_INVALID_VALUE (docs/driver-facts.md §6). A zero grid
// or block dimension, a
// block over 1024 threads or 1024 × 1024 × 64, a grid over 2^31-1 × 65535 × 65535 →
// CUDA_ERROR_INVALID_VALUE [I: the limits of every GPU since CC 3.0, not checked per device]. The
// stream must be NULL, CU_STREAM_LEGACY or CU_STREAM_PER_THREAD (the fake has no streams) → else
// CUDA_ERROR_INVALID_HANDLE. Kernel parameters are not read. Then the `launch` failure point.
// Thread safety: any thread.
#pragma once

#include <cuda.h>

namespace jitcache::fakes::fake_cuda {

struct LaunchShape {
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_mem_bytes;
};

CUresult launch_kernel(CUfunction f, const LaunchShape& shape, CUstream stream, void** kernel_params, void** extra);

}  // namespace jitcache::fakes::fake_cuda
