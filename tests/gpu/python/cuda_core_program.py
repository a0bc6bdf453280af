# cuda.core's Program compiles with NVRTC (through cuda.bindings) to a cubin; under jitcache run the
# second start's compile is a hit, and the lowered name a name expression asked for still finds the
# kernel.
import numpy as np
try:  # cuda.core 0.4+ exports these at the top; earlier releases under .experimental
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
except ImportError:
    from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch

device = Device()
device.set_current()
stream = device.create_stream()
source = r'''
template <typename T>
__global__ void add_one(T* x, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) x[i] += T(1);
}
'''
arch = "".join(str(part) for part in device.compute_capability)
program = Program(source, code_type="c++", options=ProgramOptions(std="c++17", arch="sm_" + arch))
module = program.compile("cubin", name_expressions=("add_one<float>",))
kernel = module.get_kernel("add_one<float>")
n = 1024
buffer = device.memory_resource.allocate(n * 4, stream=stream)
host = np.zeros(n, dtype=np.float32)
from cuda.bindings import driver

driver.cuMemcpyHtoDAsync(buffer.handle, host.ctypes.data, n * 4, stream.handle)
launch(stream, LaunchConfig(grid=(n + 255) // 256, block=256), kernel, buffer, np.int32(n))
driver.cuMemcpyDtoHAsync(host.ctypes.data, buffer.handle, n * 4, stream.handle)
stream.sync()
assert np.all(host == 1.0), "wrong results"
print("cuda.core program ok", float(host.sum()))
