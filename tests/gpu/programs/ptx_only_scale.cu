// An unmodified runtime-API program built with PTX only (-gencode arch=compute_80,code=compute_80),
// as programs shipped for an older GPU meet a newer one: cudart loads its embedded fat binary and
// the driver JIT-compiles the PTX on every start unless a cache serves it. It scales an array on the
// GPU and checks every element, printing one line that is the same on every run.
#include <cstdio>
#include <vector>

__global__ void scale_by(float* data, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * factor + static_cast<float>(i % 7);
}

int main() {
  const int n = 1 << 20;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000) * 0.5f;
  float* device = nullptr;
  if (cudaMalloc(&device, n * sizeof(float)) != cudaSuccess) {
    std::printf("cudaMalloc failed: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  cudaMemcpy(device, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  scale_by<<<(n + 255) / 256, 256>>>(device, 3.0f, n);
  cudaError_t launched = cudaGetLastError();
  cudaError_t finished = cudaDeviceSynchronize();
  if (launched != cudaSuccess || finished != cudaSuccess) {
    std::printf("kernel failed: %s\n", cudaGetErrorString(launched != cudaSuccess ? launched : finished));
    return 1;
  }
  std::vector<float> result(n);
  cudaMemcpy(result.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(device);
  int wrong = 0;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const float expected = host[i] * 3.0f + static_cast<float>(i % 7);
    if (result[i] != expected) ++wrong;
    sum += result[i];
  }
  std::printf("scale_by: %d elements, %d wrong, sum %.1f\n", n, wrong, sum);
  return wrong == 0 ? 0 : 1;
}
