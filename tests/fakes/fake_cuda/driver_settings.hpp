// The fake's configuration: the device's compute capability, the driver API version, the entry points
// cuGetProcAddress hides, and whether a malformed cubin aborts the process.
//
// Read from FAKE_CUDA_CC, FAKE_CUDA_DRIVER_VERSION, FAKE_CUDA_HIDE and FAKE_CUDA_CRASH_ON_TRUNCATED
// (tests/fakes/README.md); a value that does not parse is reported on stderr and the default kept.
// Thread safety: Settings is a value; SettingsHolder guards one with a mutex and hands out copies, so
// a driver call works with one consistent configuration even while a test changes it.
#pragma once

#include <tests/fakes/fake_cuda/device_model.hpp>

#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace jitcache::fakes::fake_cuda {

struct Settings {
  unsigned cc = k_default_cc;
  int driver_version = k_default_driver_version;
  std::set<std::string, std::less<>> hidden_entry_points;
  bool crash_on_truncated = false;
};

Settings settings_from_environment();
// "cuLinkCreate, cuModuleLoadDataEx" → {"cuLinkCreate", "cuModuleLoadDataEx"}.
std::set<std::string, std::less<>> parse_name_list(std::string_view text);
// Rationale: 10.0 through 99.9 spans every CUDA API level a client could ask for (cudaVersion is
// 1000 * major + 10 * minor); anything else is a typo.
bool valid_driver_version(int version);

class SettingsHolder {
 public:
  Settings get() const;
  void set(Settings settings);
  void update(const std::function<void(Settings&)>& change);

 private:
  mutable std::mutex m_mutex;
  Settings m_settings;
};

// One line on stderr, prefixed "fake_cuda: " (the fake never writes to stdout).
void warn(std::string_view message);

}  // namespace jitcache::fakes::fake_cuda
