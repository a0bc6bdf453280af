#include <tests/fakes/fake_cuda/fake_driver.hpp>

#include <cstdlib>
#include <string>
#include <vector>

namespace jitcache::fakes::fake_cuda {

FakeDriver& FakeDriver::instance() {
  // Rationale: never destroyed, so a client thread still inside the driver during static
  // destruction (an application exiting with loads in flight) does not meet a dead mutex.
  static FakeDriver* driver = new FakeDriver();
  return *driver;
}

FakeDriver::FakeDriver() { reload_environment(); }

std::optional<CUresult> FakeDriver::injected_failure(FaultPoint point) {
  const auto code = faults.take(point);
  if (!code) return std::nullopt;
  counters.injected_failures.fetch_add(1);
  counters.set_last_error_log("fake_cuda: injected failure at " + std::string(fault_point_name(point)) + " (" +
                              std::to_string(*code) + ")");
  return static_cast<CUresult>(*code);
}

void FakeDriver::reload_environment() {
  settings.set(settings_from_environment());
  faults.clear();
  const char* spec = std::getenv("FAKE_CUDA_FAIL");
  if (spec == nullptr) return;
  std::vector<std::string> problems;
  for (const FaultRule& rule : parse_fault_spec(spec, problems)) faults.set(rule.point, rule.code, rule.times);
  for (const std::string& problem : problems) warn(problem);
}

}  // namespace jitcache::fakes::fake_cuda
