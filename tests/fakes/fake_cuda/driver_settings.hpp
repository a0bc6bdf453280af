// The fake's configuration: the devices' compute capabilities, the driver API version, the entry
// points cuGetProcAddress hides, whether a malformed cubin aborts the process, and the module loading
// mode cuModuleGetLoadingMode reports.
//
// Read from FAKE_CUDA_DEVICES (or FAKE_CUDA_CC), FAKE_CUDA_DRIVER_VERSION, FAKE_CUDA_HIDE,
// FAKE_CUDA_CRASH_ON_TRUNCATED, FAKE_CUDA_REPORT and CUDA_MODULE_LOADING (tests/fakes/README.md); a
// value that does not parse is reported on stderr and the default kept.
// Thread safety: Settings is a value; SettingsHolder guards one with a mutex and hands out copies, so
// a driver call works with one consistent configuration even while a test changes it.
#pragma once

#include <tests/fakes/fake_cuda/device_model.hpp>

#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache::fakes::fake_cuda {

// Rationale: enough for any host a test models (an 8-GPU node with two archs); more is a typo.
inline constexpr std::size_t k_max_devices = 16;

struct Settings {
  // Compute capability per device ordinal. Device 0 is the current context's device: the JIT targets
  // it and cubins must run on it. Never empty.
  std::vector<unsigned> device_ccs{k_default_cc};
  int driver_version = k_default_driver_version;
  std::set<std::string, std::less<>> hidden_entry_points;
  bool crash_on_truncated = false;
  // CUDA_MODULE_LOADING=EAGER; anything else is LAZY, the driver's default since CUDA 12.2
  // (docs/driver-facts.md §6).
  bool eager_module_loading = false;
  // FAKE_CUDA_REPORT: where the exit report goes (exit_report.hpp); empty: nowhere.
  std::string report_path;

  unsigned cc() const { return device_ccs.front(); }
};

Settings settings_from_environment();
// "90,80" → {90, 80}; nullopt for an empty list, a CC parse_cc refuses or more than k_max_devices.
std::optional<std::vector<unsigned>> parse_device_list(std::string_view text);
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
