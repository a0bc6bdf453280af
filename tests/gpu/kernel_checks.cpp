#include <tests/gpu/kernel_checks.hpp>

#include <limits>
#include <vector>

namespace jitcache::testing::gpu {

namespace {

// Device memory freed with the object, so a failed check leaks nothing into the next test.
class DeviceBuffer {
 public:
  DeviceBuffer(const GpuDriver& gpu, std::size_t bytes) : m_gpu(gpu) { m_result = gpu.mem_alloc(&m_pointer, bytes); }
  ~DeviceBuffer() {
    if (m_result == CUDA_SUCCESS) m_gpu.mem_free(m_pointer);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUresult result() const { return m_result; }
  CUdeviceptr get() const { return m_pointer; }

 private:
  const GpuDriver& m_gpu;
  CUdeviceptr m_pointer = 0;
  CUresult m_result = CUDA_ERROR_UNKNOWN;
};

KernelCheck failed(const GpuDriver& gpu, const std::string& step, CUresult result) {
  return {false, step + " returned " + gpu.describe(result)};
}

// Launches `name` on a 1-D grid and waits for it; an empty string on success, else what failed.
std::string launch(const GpuDriver& gpu, CUmodule module, const char* name, unsigned blocks, unsigned threads,
                   void** params) {
  CUfunction function = nullptr;
  if (CUresult r = gpu.module_get_function(&function, module, name); r != CUDA_SUCCESS) {
    return std::string("cuModuleGetFunction(") + name + ") returned " + gpu.describe(r);
  }
  if (CUresult r = gpu.launch_kernel(function, blocks, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr);
      r != CUDA_SUCCESS) {
    return std::string("cuLaunchKernel(") + name + ") returned " + gpu.describe(r);
  }
  if (CUresult r = gpu.ctx_synchronize(); r != CUDA_SUCCESS) {
    return std::string("cuCtxSynchronize after ") + name + " returned " + gpu.describe(r);
  }
  return {};
}

// Multiples of 0.25 between -2 and 3.5: a block's sum of 256 of them is exact in float.
float reduce_input(int i) { return static_cast<float>((i * 7) % 23) * 0.25f - 2.0f; }

}  // namespace

KernelCheck check_reduce_partial(const GpuDriver& gpu, CUmodule module) {
  constexpr int k_threads = 256;  // the kernel's shared array holds exactly one block of 256
  constexpr int k_n = k_threads * 40 + 77;
  constexpr int k_blocks = (k_n + k_threads - 1) / k_threads;

  std::vector<float> input(k_n);
  for (int i = 0; i < k_n; ++i) input[i] = reduce_input(i);
  std::vector<float> expected(k_blocks, 0.0f);
  for (int i = 0; i < k_n; ++i) expected[i / k_threads] += input[i];

  DeviceBuffer in(gpu, input.size() * sizeof(float));
  DeviceBuffer out(gpu, expected.size() * sizeof(float));
  if (in.result() != CUDA_SUCCESS) return failed(gpu, "cuMemAlloc", in.result());
  if (out.result() != CUDA_SUCCESS) return failed(gpu, "cuMemAlloc", out.result());
  if (CUresult r = gpu.memcpy_htod(in.get(), input.data(), input.size() * sizeof(float)); r != CUDA_SUCCESS) {
    return failed(gpu, "cuMemcpyHtoD", r);
  }
  std::vector<float> sums(k_blocks, std::numeric_limits<float>::quiet_NaN());
  if (CUresult r = gpu.memcpy_htod(out.get(), sums.data(), sums.size() * sizeof(float)); r != CUDA_SUCCESS) {
    return failed(gpu, "cuMemcpyHtoD", r);
  }

  CUdeviceptr in_pointer = in.get();
  CUdeviceptr out_pointer = out.get();
  int n = k_n;
  void* params[] = {&in_pointer, &out_pointer, &n};
  if (auto error = launch(gpu, module, "reduce_partial", k_blocks, k_threads, params); !error.empty()) {
    return {false, error};
  }
  if (CUresult r = gpu.memcpy_dtoh(sums.data(), out.get(), sums.size() * sizeof(float)); r != CUDA_SUCCESS) {
    return failed(gpu, "cuMemcpyDtoH", r);
  }
  for (int block = 0; block < k_blocks; ++block) {
    if (!(sums[block] == expected[block])) {
      return {false, "reduce_partial block " + std::to_string(block) + " of " + std::to_string(k_blocks) + ": sum " +
                         std::to_string(sums[block]) + ", expected " + std::to_string(expected[block])};
    }
  }
  return {true, "reduce_partial: all " + std::to_string(k_blocks) + " partial sums of " + std::to_string(k_n) +
                    " inputs right"};
}

KernelCheck check_scale(const GpuDriver& gpu, CUmodule module) {
  constexpr int k_threads = 128;
  constexpr int k_n = 1000;
  constexpr int k_blocks = (k_n + k_threads - 1) / k_threads;
  constexpr float k_factor = 3.0f;

  std::vector<float> data(k_n);
  for (int i = 0; i < k_n; ++i) data[i] = static_cast<float>(i) * 0.5f - 100.0f;
  DeviceBuffer buffer(gpu, data.size() * sizeof(float));
  if (buffer.result() != CUDA_SUCCESS) return failed(gpu, "cuMemAlloc", buffer.result());
  if (CUresult r = gpu.memcpy_htod(buffer.get(), data.data(), data.size() * sizeof(float)); r != CUDA_SUCCESS) {
    return failed(gpu, "cuMemcpyHtoD", r);
  }

  CUdeviceptr pointer = buffer.get();
  float factor = k_factor;
  int n = k_n;
  void* params[] = {&pointer, &factor, &n};
  if (auto error = launch(gpu, module, "scale", k_blocks, k_threads, params); !error.empty()) return {false, error};
  std::vector<float> scaled(k_n, std::numeric_limits<float>::quiet_NaN());
  if (CUresult r = gpu.memcpy_dtoh(scaled.data(), buffer.get(), scaled.size() * sizeof(float)); r != CUDA_SUCCESS) {
    return failed(gpu, "cuMemcpyDtoH", r);
  }
  for (int i = 0; i < k_n; ++i) {
    if (!(scaled[i] == data[i] * k_factor)) {
      return {false, "scale element " + std::to_string(i) + ": " + std::to_string(scaled[i]) + ", expected " +
                         std::to_string(data[i] * k_factor)};
    }
  }
  return {true, "scale: all " + std::to_string(k_n) + " elements right"};
}

}  // namespace jitcache::testing::gpu
