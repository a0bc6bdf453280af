# NVIDIA Warp emits PTX whenever the driver is at least as new as its toolkit, and the driver JITs
# it: under jitcache run that JIT is cached.
import numpy as np
import warp as wp

wp.init()


@wp.kernel
def triple(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 3.0


n = 1024
a = wp.array(np.arange(n, dtype=np.float32), dtype=float, device="cuda:0")
wp.launch(triple, dim=n, inputs=[a], device="cuda:0")
out = a.numpy()
assert np.array_equal(out, np.arange(n, dtype=np.float32) * 3), "wrong results"
print("warp triple ok", float(out.sum()))
