// A host program with device code, for `jitcache warm` on executables and shared libraries
// (tests/integration/test_cli_warm_binaries.cpp): linked with fatbin_kernel.cu by nvcc at test-build
// time, it carries one fat binary container per translation unit in its .nv_fatbin section. It is
// never run.
extern "C" __global__ void offset(float* data, float by, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += by;
}

int main() { return 0; }
