// The fake's control API (fake_cuda_control.h), exported beside the driver entry points so a test can
// dlsym it from the handle it opened the fake with. Thread safety: as the header says, any thread.
#include <tests/fakes/fake_cuda/fake_cuda_control.h>

#include <tests/fakes/fake_cuda/device_model.hpp>
#include <tests/fakes/fake_cuda/driver_settings.hpp>
#include <tests/fakes/fake_cuda/fake_driver.hpp>
#include <tests/fakes/fake_cuda/fault_plan.hpp>

namespace fake = jitcache::fakes::fake_cuda;

extern "C" {

int fake_cuda_set_failure(const char* point, int code, int times) {
  if (point == nullptr || code < 0) return -1;
  const auto parsed = fake::fault_point_from_name(point);
  if (!parsed) return -1;
  fake::FakeDriver::instance().faults.set(*parsed, code, times);
  return 0;
}

void fake_cuda_clear_failures(void) { fake::FakeDriver::instance().faults.clear(); }

void fake_cuda_get_counters(fake_cuda_counters* out) {
  if (out == nullptr) return;
  fake::FakeDriver& driver = fake::FakeDriver::instance();
  driver.counters.snapshot(*out, driver.modules.alive(), driver.libraries.alive());
}

void fake_cuda_reset_counters(void) {
  fake::FakeDriver& driver = fake::FakeDriver::instance();
  driver.counters.reset();
  driver.images.reset();
  driver.launches.reset();
}

int fake_cuda_last_image(fake_cuda_image_info* out) {
  if (out == nullptr) return -1;
  return fake::FakeDriver::instance().images.last(*out) ? 0 : -1;
}

int fake_cuda_last_launch(fake_cuda_launch* out) {
  if (out == nullptr) return -1;
  return fake::FakeDriver::instance().launches.last(*out) ? 0 : -1;
}

int fake_cuda_set_device(int cc, int driver_version) {
  if (cc < 0 || driver_version < 0) return -1;
  if (cc != 0 && !fake::parse_cc(std::to_string(cc))) return -1;
  if (driver_version != 0 && !fake::valid_driver_version(driver_version)) return -1;
  fake::FakeDriver::instance().settings.update([&](fake::Settings& settings) {
    if (cc != 0) settings.device_ccs.front() = static_cast<unsigned>(cc);
    if (driver_version != 0) settings.driver_version = driver_version;
  });
  return 0;
}

int fake_cuda_set_devices(const char* comma_separated_ccs) {
  if (comma_separated_ccs == nullptr || *comma_separated_ccs == '\0') {
    fake::FakeDriver::instance().settings.update([](fake::Settings& settings) { settings.device_ccs.resize(1); });
    return 0;
  }
  auto ccs = fake::parse_device_list(comma_separated_ccs);
  if (!ccs) return -1;
  fake::FakeDriver::instance().settings.update(
      [&](fake::Settings& settings) { settings.device_ccs = std::move(*ccs); });
  return 0;
}

void fake_cuda_set_hidden(const char* comma_separated_names) {
  auto names = fake::parse_name_list(comma_separated_names != nullptr ? comma_separated_names : "");
  fake::FakeDriver::instance().settings.update(
      [&](fake::Settings& settings) { settings.hidden_entry_points = std::move(names); });
}

void fake_cuda_set_crash_on_truncated(int enabled) {
  fake::FakeDriver::instance().settings.update(
      [&](fake::Settings& settings) { settings.crash_on_truncated = enabled != 0; });
}

void fake_cuda_reload_environment(void) { fake::FakeDriver::instance().reload_environment(); }

}  // extern "C"
