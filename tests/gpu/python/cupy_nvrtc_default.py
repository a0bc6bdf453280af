# CuPy in its default mode compiles with NVRTC to a cubin; with its own cache in memory only
# (CUPY_CACHE_IN_MEMORY=1, as in a fresh container or a read-only home) every start compiles again,
# and under jitcache run the second start's NVRTC compiles are hits. A templated kernel reached
# through a name expression checks the lowered names a hit must keep.
#
# With --fresh-cache, CuPy's disk cache is a new empty directory each run (every new container, a
# wiped or fresh HOME): CuPy then names each program by a path in a temporary directory of its own.
import os
import shutil
import sys
import tempfile

if "--fresh-cache" in sys.argv:
    fresh = tempfile.mkdtemp(prefix="cupy-cache-")
    os.environ["CUPY_CACHE_DIR"] = fresh
    os.environ.pop("CUPY_CACHE_IN_MEMORY", None)

import cupy as cp

source = r'''
template <typename T>
__global__ void affine(const T* x, T* y, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) y[i] = T(3) * x[i] + T(1);
}
'''
module = cp.RawModule(code=source, options=("-std=c++17",), name_expressions=("affine<float>", "affine<double>"))
n = 4096
for dtype, name in ((cp.float32, "affine<float>"), (cp.float64, "affine<double>")):
    x = cp.arange(n, dtype=dtype)
    y = cp.empty_like(x)
    module.get_function(name)(((n + 255) // 256,), (256,), (x, y, cp.int32(n)))
    assert bool(cp.all(y == 3 * x + 1)), "wrong results for " + name
# An elementwise kernel and a reduction: CuPy's own generated sources, its -I include directory.
z = cp.ElementwiseKernel("float32 a", "float32 b", "b = a * a + 2", "square_plus_two")(cp.arange(n, dtype=cp.float32))
assert float(z[3]) == 11.0, "wrong elementwise result"
print("cupy nvrtc ok", float(z.sum()))
if "--fresh-cache" in sys.argv:
    shutil.rmtree(fresh, ignore_errors=True)
