// The hidden mode of every gpu test executable, for the tests whose subject is another process:
//
//   <test exe> --jitcache-child-load-reduce PTX_PATH
//
// loads the PTX at PTX_PATH through the cache (the daemon from $JITCACHE_SOCKET), runs
// reduce_partial from it and prints one line, "outcome=<name> key=<key id> kernel=<ok|wrong>
// detail=<...>". Exit status 0 when the load and the sums are right, 1 otherwise.
// Thread safety: runs on main's thread with the GPU's context current.
#pragma once

#include <string>

#include <tests/support/gpu_driver.hpp>

namespace jitcache::testing::gpu {

inline constexpr const char* k_child_load_flag = "--jitcache-child-load-reduce";

int run_child_load(const GpuDriver& gpu, const std::string& ptx_path);

}  // namespace jitcache::testing::gpu
