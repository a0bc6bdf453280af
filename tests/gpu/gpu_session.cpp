#include <tests/gpu/gpu_session.hpp>

#include <optional>
#include <stdexcept>

namespace jitcache::testing::gpu {

namespace {
std::optional<GpuDriver> g_driver;
}  // namespace

const GpuDriver& driver() {
  if (!g_driver) throw std::logic_error("the GPU was not opened (gpu tests need gpu_main.cpp's main)");
  return *g_driver;
}

void set_driver(GpuDriver opened) { g_driver = std::move(opened); }

}  // namespace jitcache::testing::gpu
