// The fake driver's process-wide state: settings, the failure plan, counters, the records of the last
// image and launch, and the live modules, libraries and link states. One instance, created on first
// use from the FAKE_CUDA_* environment.
//
// Thread safety: instance() is safe to call from any thread (a function-local static); each member
// carries its own thread-safety contract (all may be used concurrently).
#pragma once

#include <tests/fakes/fake_cuda/counters.hpp>
#include <tests/fakes/fake_cuda/driver_settings.hpp>
#include <tests/fakes/fake_cuda/fault_plan.hpp>
#include <tests/fakes/fake_cuda/image_record.hpp>
#include <tests/fakes/fake_cuda/launch_record.hpp>
#include <tests/fakes/fake_cuda/library_registry.hpp>
#include <tests/fakes/fake_cuda/link_state.hpp>
#include <tests/fakes/fake_cuda/module_registry.hpp>

#include <cuda.h>

#include <optional>
#include <string_view>

namespace jitcache::fakes::fake_cuda {

class FakeDriver {
 public:
  static FakeDriver& instance();

  SettingsHolder settings;
  FaultPlan faults;
  Counters counters;
  ImageRecord images;
  LaunchRecord launches;
  ModuleRegistry modules;
  LibraryRegistry libraries{counters};
  LinkRegistry links;

  // The CUresult to fail with when `point` is armed (counting it and recording why), else nullopt.
  std::optional<CUresult> injected_failure(FaultPoint point);
  // Settings and failure plan as the environment says, dropping what the control API set.
  void reload_environment();

 private:
  FakeDriver();
};

}  // namespace jitcache::fakes::fake_cuda
