# A cuda.bindings program: NVRTC compiles CUDA C++ to PTX for an older virtual arch, the driver
# loads it with cuModuleLoadData (a JIT on every start), and a kernel launch checks the results.
import ctypes

import numpy as np
from cuda.bindings import driver, nvrtc


def check(result):
    err = result[0]
    if isinstance(err, driver.CUresult) and err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"driver: {err}")
    if isinstance(err, nvrtc.nvrtcResult) and err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"nvrtc: {err}")
    return result[1:] if len(result) > 2 else (result[1] if len(result) == 2 else None)


source = b'''
extern "C" __global__ void add_one(float* data, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}
'''
check(driver.cuInit(0))
device = check(driver.cuDeviceGet(0))
context = check(driver.cuDevicePrimaryCtxRetain(device))
check(driver.cuCtxSetCurrent(context))
program = check(nvrtc.nvrtcCreateProgram(source, b"add_one.cu", 0, [], []))
check(nvrtc.nvrtcCompileProgram(program, 1, [b"--gpu-architecture=compute_80"]))
size = check(nvrtc.nvrtcGetPTXSize(program))
ptx = b" " * size
check(nvrtc.nvrtcGetPTX(program, ptx))
module = check(driver.cuModuleLoadData(ptx))
function = check(driver.cuModuleGetFunction(module, b"add_one"))
n = 1024
host = np.arange(n, dtype=np.float32)
buffer = check(driver.cuMemAlloc(host.nbytes))
check(driver.cuMemcpyHtoD(buffer, host.ctypes.data, host.nbytes))
arg_buffer = np.array([int(buffer)], dtype=np.uint64)
arg_n = np.array([n], dtype=np.int32)
args = np.array([arg_buffer.ctypes.data, arg_n.ctypes.data], dtype=np.uint64)
check(driver.cuLaunchKernel(function, (n + 255) // 256, 1, 1, 256, 1, 1, 0, 0, args.ctypes.data, 0))
check(driver.cuCtxSynchronize())
result = np.empty_like(host)
check(driver.cuMemcpyDtoH(result.ctypes.data, buffer, host.nbytes))
assert np.array_equal(result, host + 1), "wrong results"
print("cuda.bindings add_one ok", float(result.sum()))
