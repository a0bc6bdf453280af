// The GPU the gpu tests run on: opened once by their main (gpu_main.cpp) before any test case, so
// a test case can assume a driver, a device and a current primary context.
// Thread safety: set once before the tests start; read-only afterwards.
#pragma once

#include <tests/support/gpu_driver.hpp>

namespace jitcache::testing::gpu {

// The driver opened by main(); calling it before main() has opened one is a programming error.
const GpuDriver& driver();
void set_driver(GpuDriver opened);

}  // namespace jitcache::testing::gpu
