// Runs the test kernels on the GPU and checks their results on the host, so that a GPU test
// proves the module it got is the right code, not only that a load returned CUDA_SUCCESS.
// Inputs are chosen so that every expected value is exact in float: any difference is a wrong
// result, not rounding. Outputs start as values the kernel must change (NaN for the sums), so a
// kernel that writes nothing fails.
// Thread safety: call on a thread where the GPU's context is current.
#pragma once

#include <cuda.h>

#include <string>

#include <tests/support/gpu_driver.hpp>

namespace jitcache::testing::gpu {

struct KernelCheck {
  bool ok = false;
  std::string detail;  // what went wrong, or what was checked
};

// reduce_partial(const float* in, float* out, int n) (corpus small_kernel.cu): 256 threads per
// block, one partial sum per block; n is not a multiple of 256, so the tail block is checked too.
KernelCheck check_reduce_partial(const GpuDriver& gpu, CUmodule module);

// scale(float* data, float factor, int n) (tests/data/fatbin_kernel.cu): data[i] *= factor.
KernelCheck check_scale(const GpuDriver& gpu, CUmodule module);

}  // namespace jitcache::testing::gpu
