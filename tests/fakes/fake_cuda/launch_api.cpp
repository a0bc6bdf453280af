#include <tests/fakes/fake_cuda/launch_api.hpp>

#include <tests/fakes/fake_cuda/fake_driver.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace jitcache::fakes::fake_cuda {
namespace {

constexpr std::uint64_t k_max_threads_per_block = 1024;
constexpr unsigned k_max_block[3] = {1024, 1024, 64};
constexpr unsigned k_max_grid[3] = {2147483647u, 65535, 65535};

bool shape_is_valid(const LaunchShape& shape) {
  std::uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (shape.grid[i] == 0 || shape.block[i] == 0) return false;
    if (shape.grid[i] > k_max_grid[i] || shape.block[i] > k_max_block[i]) return false;
    threads *= shape.block[i];
  }
  return threads <= k_max_threads_per_block;
}

bool stream_is_known(CUstream stream) {
  return stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}

}  // namespace

CUresult launch_kernel(CUfunction f, const LaunchShape& shape, CUstream stream, void** kernel_params, void** extra) {
  FakeDriver& driver = FakeDriver::instance();
  if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::string name = driver.modules.function_name(f);
  const bool through_kernel = name.empty();
  if (through_kernel) name = driver.libraries.kernel_name(reinterpret_cast<CUkernel>(f));
  if (name.empty()) return CUDA_ERROR_INVALID_HANDLE;
  if (kernel_params != nullptr && extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!shape_is_valid(shape)) return CUDA_ERROR_INVALID_VALUE;
  if (!stream_is_known(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (auto code = driver.injected_failure(FaultPoint::launch)) return *code;

  fake_cuda_launch launch{};
  std::memcpy(launch.kernel_name, name.data(), std::min(name.size(), sizeof(launch.kernel_name) - 1));
  std::copy(std::begin(shape.grid), std::end(shape.grid), launch.grid);
  std::copy(std::begin(shape.block), std::end(shape.block), launch.block);
  launch.shared_mem_bytes = shape.shared_mem_bytes;
  launch.through_kernel_handle = through_kernel ? 1 : 0;
  launch.sequence = driver.counters.kernels_launched.fetch_add(1) + 1;
  driver.launches.record(launch);
  return CUDA_SUCCESS;
}

}  // namespace jitcache::fakes::fake_cuda
