#include <tests/support/fake_driver.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>

namespace jitcache::testing {

namespace {
template <class Fn>
void resolve(void* handle, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(::dlsym(handle, name));
  if (out == nullptr) throw std::runtime_error(std::string("the fake driver lacks ") + name);
}
}  // namespace

std::string FakeDriver::path() { return JITCACHE_FAKE_CUDA_DRIVER; }

FakeDriver::FakeDriver(bool select) {
  if (select) ::setenv("JITCACHE_CUDA_DRIVER", JITCACHE_FAKE_CUDA_DRIVER, 1);
  // The same path libjitcache opens, so both see one instance of the fake.
  void* handle = ::dlopen(JITCACHE_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw std::runtime_error(std::string("cannot open the fake driver: ") + ::dlerror());
  resolve(handle, "fake_cuda_set_failure", m_set_failure);
  resolve(handle, "fake_cuda_clear_failures", m_clear_failures);
  resolve(handle, "fake_cuda_get_counters", m_get_counters);
  resolve(handle, "fake_cuda_reset_counters", m_reset_counters);
  resolve(handle, "fake_cuda_set_device", m_set_device);
  resolve(handle, "fake_cuda_set_devices", m_set_devices);
  resolve(handle, "fake_cuda_last_image", m_last_image);
  resolve(handle, "fake_cuda_last_launch", m_last_launch);
  resolve(handle, "fake_cuda_set_hidden", m_set_hidden);
  resolve(handle, "fake_cuda_set_crash_on_truncated", m_set_crash);
}

fake_cuda_counters FakeDriver::counters() const {
  fake_cuda_counters counters{};
  m_get_counters(&counters);
  return counters;
}

}  // namespace jitcache::testing
