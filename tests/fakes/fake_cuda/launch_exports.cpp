// cuLaunchKernel and its per-thread-default-stream ABI cuLaunchKernel_ptsz (launch_api.hpp says what
// they check and record). Thread safety: any thread.
#include <tests/fakes/fake_cuda/abi_declarations.hpp>
#include <tests/fakes/fake_cuda/launch_api.hpp>

#include <cuda.h>

namespace fake = jitcache::fakes::fake_cuda;

extern "C" {

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                                unsigned int block_x, unsigned int block_y, unsigned int block_z,
                                unsigned int shared_mem_bytes, CUstream stream, void** kernel_params, void** extra) {
  const fake::LaunchShape shape{{grid_x, grid_y, grid_z}, {block_x, block_y, block_z}, shared_mem_bytes};
  return fake::launch_kernel(f, shape, stream, kernel_params, extra);
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                                     unsigned int block_x, unsigned int block_y, unsigned int block_z,
                                     unsigned int shared_mem_bytes, CUstream stream, void** kernel_params,
                                     void** extra) {
  const fake::LaunchShape shape{{grid_x, grid_y, grid_z}, {block_x, block_y, block_z}, shared_mem_bytes};
  return fake::launch_kernel(f, shape, stream, kernel_params, extra);
}

}  // extern "C"
