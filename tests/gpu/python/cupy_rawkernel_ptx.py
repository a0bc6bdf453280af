# CuPy compiles a RawKernel to PTX with CUPY_COMPILE_WITH_PTX=1 and hands it to the driver, which
# JIT-compiles it on every start: under jitcache run the second start is a hit.
import cupy as cp

source = r'''
extern "C" __global__ void twice(const float* x, float* y, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
'''
kernel = cp.RawKernel(source, "twice")
n = 4096
x = cp.arange(n, dtype=cp.float32)
y = cp.empty_like(x)
kernel(((n + 255) // 256,), (256,), (x, y, cp.int32(n)))
assert bool(cp.all(y == 2 * x + 1)), "wrong results"
print("cupy twice ok", float(y.sum()))
