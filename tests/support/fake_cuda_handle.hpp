// The fake CUDA driver (tests/fakes/fake_cuda) opened as a program opens libcuda: by path with
// dlopen, every entry point asked of cuGetProcAddress_v2 at the version the caller names, the control
// API found with dlsym on the same handle. `fake_cuda()` hands out the one handle of the process and
// puts the fake back to its defaults first (one device of CC 9.0, driver 13000, nothing hidden or
// armed, counters and records zeroed), so each test starts from the same state.
// Thread safety: the fake's API is thread-safe; this object is immutable once opened. Catch2
// assertions inside, so resolve from the test's thread.
#pragma once

#include <tests/fakes/fake_cuda/fake_cuda_control.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <catch2/catch.hpp>

#include <dlfcn.h>

namespace jitcache::testing::fake_cuda {

class FakeCudaHandle {
 public:
  void* handle() const { return m_handle; }

  // The entry point cuGetProcAddress_v2 gives for `base` at `version`; the test fails when none.
  template <class Pfn>
  Pfn entry(const char* base, int version, cuuint64_t flags = CU_GET_PROC_ADDRESS_DEFAULT) const {
    void* pfn = nullptr;
    CUdriverProcAddressQueryResult status{};
    INFO(base << " at " << version);
    REQUIRE(m_get_proc_address(base, &pfn, version, flags, &status) == CUDA_SUCCESS);
    REQUIRE(status == CU_GET_PROC_ADDRESS_SUCCESS);
    REQUIRE(pfn != nullptr);
    return reinterpret_cast<Pfn>(pfn);
  }

  // dlsym on the fake's handle: an exported ABI name or a control function.
  void* symbol(const char* name) const { return dlsym(m_handle, name); }
  template <class F>
  F control(const char* name) const {
    INFO(name);
    void* found = symbol(name);
    REQUIRE(found != nullptr);
    return reinterpret_cast<F>(found);
  }

  PFN_cuGetProcAddress_v12000 get_proc_address() const { return m_get_proc_address; }

  fake_cuda_counters counters() const {
    fake_cuda_counters snapshot{};
    control<decltype(&fake_cuda_get_counters)>("fake_cuda_get_counters")(&snapshot);
    return snapshot;
  }
  // 0 when an image was recorded (fake_cuda_last_image).
  int last_image(fake_cuda_image_info& out) const {
    return control<decltype(&fake_cuda_last_image)>("fake_cuda_last_image")(&out);
  }
  int last_launch(fake_cuda_launch& out) const {
    return control<decltype(&fake_cuda_last_launch)>("fake_cuda_last_launch")(&out);
  }
  int set_failure(const char* point, int code, int times) const {
    return control<decltype(&fake_cuda_set_failure)>("fake_cuda_set_failure")(point, code, times);
  }
  int set_device(int cc, int driver_version) const {
    return control<decltype(&fake_cuda_set_device)>("fake_cuda_set_device")(cc, driver_version);
  }
  int set_devices(const char* ccs) const {
    return control<decltype(&fake_cuda_set_devices)>("fake_cuda_set_devices")(ccs);
  }
  void set_hidden(const char* names) const { control<decltype(&fake_cuda_set_hidden)>("fake_cuda_set_hidden")(names); }
  void reset_counters() const { control<decltype(&fake_cuda_reset_counters)>("fake_cuda_reset_counters")(); }
  void reload_environment() const {
    control<decltype(&fake_cuda_reload_environment)>("fake_cuda_reload_environment")();
  }

  void restore_defaults() const {
    control<decltype(&fake_cuda_clear_failures)>("fake_cuda_clear_failures")();
    control<decltype(&fake_cuda_set_crash_on_truncated)>("fake_cuda_set_crash_on_truncated")(0);
    set_hidden(nullptr);
    REQUIRE(set_devices(nullptr) == 0);
    REQUIRE(set_device(90, 13000) == 0);
    reset_counters();
  }

  static FakeCudaHandle open() {
    FakeCudaHandle fake;
    fake.m_handle = dlopen(JITCACHE_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_LOCAL);
    INFO((fake.m_handle == nullptr ? dlerror() : ""));
    REQUIRE(fake.m_handle != nullptr);
    fake.m_get_proc_address = reinterpret_cast<PFN_cuGetProcAddress_v12000>(fake.symbol("cuGetProcAddress_v2"));
    REQUIRE(fake.m_get_proc_address != nullptr);
    return fake;
  }

 private:
  void* m_handle = nullptr;
  PFN_cuGetProcAddress_v12000 m_get_proc_address = nullptr;
};

inline const FakeCudaHandle& fake_cuda() {
  static const FakeCudaHandle fake = FakeCudaHandle::open();
  fake.restore_defaults();
  return fake;
}

}  // namespace jitcache::testing::fake_cuda
