// A tiny kernel from which tests/CMakeLists.txt builds fat binaries with nvcc at test-build time
// (several -gencode combinations and compression modes) for tests/unit/test_client_fatbin.cpp.
extern "C" __global__ void scale(float* data, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}
