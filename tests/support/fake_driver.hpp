// The fake CUDA driver (tests/fakes) as tests drive it: points libjitcache at it through
// JITCACHE_CUDA_DRIVER (before the library's first load) and reaches its control API on the same
// loaded instance. Thread safety: the fake's control API is thread-safe; this object is immutable.
#pragma once

#include <string>

#include <tests/fakes/fake_cuda/fake_cuda_control.h>

namespace jitcache::testing {

class FakeDriver {
 public:
  // Sets JITCACHE_CUDA_DRIVER (unless `select` is false) and opens the fake; throws when it cannot.
  explicit FakeDriver(bool select = true);

  int set_failure(const char* point, int code, int times = 1) const { return m_set_failure(point, code, times); }
  void clear_failures() const { m_clear_failures(); }
  fake_cuda_counters counters() const;
  void reset_counters() const { m_reset_counters(); }
  int set_device(int cc, int driver_version = 0) const { return m_set_device(cc, driver_version); }
  int set_devices(const char* ccs) const { return m_set_devices(ccs); }
  void set_hidden(const char* names) const { m_set_hidden(names); }
  void set_crash_on_truncated(bool enabled) const { m_set_crash(enabled ? 1 : 0); }
  // The image the last load entry point got, and the last launch; false when there was none.
  bool last_image(fake_cuda_image_info& out) const { return m_last_image(&out) == 0; }
  bool last_launch(fake_cuda_launch& out) const { return m_last_launch(&out) == 0; }

  static std::string path();

 private:
  decltype(&fake_cuda_set_failure) m_set_failure = nullptr;
  decltype(&fake_cuda_clear_failures) m_clear_failures = nullptr;
  decltype(&fake_cuda_get_counters) m_get_counters = nullptr;
  decltype(&fake_cuda_reset_counters) m_reset_counters = nullptr;
  decltype(&fake_cuda_set_device) m_set_device = nullptr;
  decltype(&fake_cuda_set_devices) m_set_devices = nullptr;
  decltype(&fake_cuda_last_image) m_last_image = nullptr;
  decltype(&fake_cuda_last_launch) m_last_launch = nullptr;
  decltype(&fake_cuda_set_hidden) m_set_hidden = nullptr;
  decltype(&fake_cuda_set_crash_on_truncated) m_set_crash = nullptr;
};

}  // namespace jitcache::testing
