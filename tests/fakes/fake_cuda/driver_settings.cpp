#include <tests/fakes/fake_cuda/driver_settings.hpp>

#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace jitcache::fakes::fake_cuda {
namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

bool valid_driver_version(int version) { return version >= 10000 && version <= 99990; }

std::set<std::string, std::less<>> parse_name_list(std::string_view text) {
  std::set<std::string, std::less<>> names;
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view name = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!name.empty()) names.emplace(name);
  }
  return names;
}

std::optional<std::vector<unsigned>> parse_device_list(std::string_view text) {
  std::vector<unsigned> ccs;
  while (true) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    const auto cc = parse_cc(item);
    if (!cc || ccs.size() == k_max_devices) return std::nullopt;
    ccs.push_back(*cc);
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  return ccs;
}

Settings settings_from_environment() {
  Settings settings;
  if (const char* cc = env("FAKE_CUDA_CC")) {
    if (const auto parsed = parse_cc(cc)) {
      settings.device_ccs = {*parsed};
    } else {
      warn(std::string("ignoring FAKE_CUDA_CC='") + cc + "' (expected e.g. 80, 90, 100 or 9.0)");
    }
  }
  // FAKE_CUDA_DEVICES describes the whole host, so it wins over FAKE_CUDA_CC.
  if (const char* devices = env("FAKE_CUDA_DEVICES")) {
    if (auto parsed = parse_device_list(devices)) {
      settings.device_ccs = std::move(*parsed);
    } else {
      warn(std::string("ignoring FAKE_CUDA_DEVICES='") + devices +
           "' (expected e.g. 90,80: one CC per device, at most " + std::to_string(k_max_devices) + ")");
    }
  }
  if (const char* version = env("FAKE_CUDA_DRIVER_VERSION")) {
    int value = 0;
    const std::string_view text(version);
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc() && end == text.data() + text.size() && valid_driver_version(value)) {
      settings.driver_version = value;
    } else {
      warn(std::string("ignoring FAKE_CUDA_DRIVER_VERSION='") + version + "' (expected e.g. 13000 or 12080)");
    }
  }
  if (const char* hidden = env("FAKE_CUDA_HIDE")) settings.hidden_entry_points = parse_name_list(hidden);
  if (const char* crash = env("FAKE_CUDA_CRASH_ON_TRUNCATED"))
    settings.crash_on_truncated = std::string_view(crash) != "0";
  if (const char* report = env("FAKE_CUDA_REPORT")) settings.report_path = report;
  if (const char* loading = env("CUDA_MODULE_LOADING"))
    settings.eager_module_loading = std::string_view(loading) == "EAGER";
  return settings;
}

Settings SettingsHolder::get() const {
  const std::lock_guard lock(m_mutex);
  return m_settings;
}

void SettingsHolder::set(Settings settings) {
  const std::lock_guard lock(m_mutex);
  m_settings = std::move(settings);
}

void SettingsHolder::update(const std::function<void(Settings&)>& change) {
  const std::lock_guard lock(m_mutex);
  change(m_settings);
}

void warn(std::string_view message) {
  std::fprintf(stderr, "fake_cuda: %.*s\n", static_cast<int>(message.size()), message.data());
}

}  // namespace jitcache::fakes::fake_cuda
