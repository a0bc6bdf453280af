#include <tests/gpu/child_load.hpp>

#include <iostream>

#include <tests/gpu/cache_load.hpp>
#include <tests/gpu/kernel_checks.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::testing::gpu {

int run_child_load(const GpuDriver& gpu, const std::string& ptx_path) {
  const std::string ptx = read_file(ptx_path);
  CacheLoad load = load_through_cache(ptx.c_str());
  KernelCheck check{false, "not run: the load failed: " + load.describe()};
  if (load.result == CUDA_SUCCESS) check = check_reduce_partial(gpu, load.module.get());
  std::cout << "outcome=" << load.outcome() << " key=" << load.info.key_id << " kernel=" << (check.ok ? "ok" : "wrong")
            << " detail=" << check.detail << std::endl;
  return load.result == CUDA_SUCCESS && check.ok ? 0 : 1;
}

}  // namespace jitcache::testing::gpu
