// A DriverApi built by hand for unit tests of libjitcache's load flow: every entry point is a test
// function that records what it was asked and answers from a script, so a test can run a load
// without any CUDA driver (not even tests/fakes' fake) and see each call the flow made.
//
// Rationale: driver entry points are plain function pointers, which cannot capture, so the
// script is one process-wide object; a test calls ScriptedDriver::reset() first.
// Header-only (test code). Thread safety: one test thread at a time.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include <client/src/driver/driver_api.hpp>

namespace jitcache::testing {

struct ScriptedDriver {
  // The script.
  int cc_major = 9;
  int cc_minor = 0;
  CUresult ctx_result = CUDA_SUCCESS;       // cuCtxGetDevice
  std::deque<CUresult> load_results;        // cuModuleLoadData, one per call (then CUDA_SUCCESS)
  CUresult load_ex_result = CUDA_SUCCESS;   // cuModuleLoadDataEx (the driver's own load)
  std::vector<std::uint8_t> linked_cubin;   // what cuLinkComplete produces
  CUresult link_add_result = CUDA_SUCCESS;  // cuLinkAddData

  std::vector<std::pair<int, int>> devices = {{9, 0}};  // cuDeviceGetCount / cuDeviceGet, by ordinal
  CUresult library_load_result = CUDA_SUCCESS;          // cuLibraryLoadData
  CUresult kernel_count_result = CUDA_SUCCESS;          // cuLibraryGetKernelCount (the probe)

  // What the flow asked.
  struct LibraryLoad {
    const void* code;
    std::vector<std::uint8_t> first_bytes;  // the first probe_bytes of the image
    unsigned jit_options;
    unsigned library_options;
  };
  std::vector<LibraryLoad> library_loads;
  std::vector<CUlibrary> unloaded_libraries;
  std::vector<std::vector<std::uint8_t>> loaded;  // the first `probe_bytes` of each cuModuleLoadData image
  std::vector<const void*> loaded_ex;             // the images handed to cuModuleLoadDataEx
  std::vector<unsigned> loaded_ex_option_counts;
  std::vector<std::string> linked_ptx;  // the PTX each cuLinkAddData compiled
  std::size_t probe_bytes = 0;          // how much of each loaded image to keep (0: none)

  static ScriptedDriver& instance() {
    static ScriptedDriver driver;
    return driver;
  }
  static ScriptedDriver& reset() { return instance() = ScriptedDriver{}; }

  // The DriverApi whose entry points are this script's, for driver 13000/580.159.04.
  static client::driver::DriverApi api() {
    client::driver::DriverApi api;
    api.ctx_get_device = &ctx_get_device;
    api.device_get_attribute = &device_get_attribute;
    api.module_load_data = &module_load_data;
    api.module_load_data_ex = &module_load_data_ex;
    api.module_unload = &module_unload;
    api.link_create = &link_create;
    api.link_add_data = &link_add_data;
    api.link_complete = &link_complete;
    api.link_destroy = &link_destroy;
    api.device_get = &device_get;
    api.device_get_count = &device_get_count;
    api.library_load_data = &library_load_data;
    api.library_unload = &library_unload;
    api.library_get_kernel_count = &library_get_kernel_count;
    api.api_version = 13000;
    api.build = "580.159.04";
    api.library_path = "scripted";
    return api;
  }

 private:
  static CUmodule a_module() { return reinterpret_cast<CUmodule>(std::uintptr_t{0x1000}); }

  static CUresult ctx_get_device(CUdevice* device) {
    *device = 0;
    return instance().ctx_result;
  }
  // The current context's device is ordinal 0 (cc_major.cc_minor); others come from `devices`.
  static CUresult device_get_attribute(int* value, CUdevice_attribute attribute, CUdevice device) {
    const ScriptedDriver& self = instance();
    const bool major = attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
    if (device > 0 && static_cast<std::size_t>(device) < self.devices.size()) {
      *value = major ? self.devices[device].first : self.devices[device].second;
    } else {
      *value = major ? self.cc_major : self.cc_minor;
    }
    return CUDA_SUCCESS;
  }
  static CUresult device_get_count(int* count) {
    *count = static_cast<int>(instance().devices.size());
    return CUDA_SUCCESS;
  }
  static CUresult device_get(CUdevice* device, int ordinal) {
    *device = ordinal;
    return CUDA_SUCCESS;
  }
  static CUresult library_load_data(CUlibrary* library, const void* code, CUjit_option*, void**, unsigned jit,
                                    CUlibraryOption*, void**, unsigned library_options) {
    ScriptedDriver& self = instance();
    const auto* bytes = static_cast<const std::uint8_t*>(code);
    self.library_loads.push_back(
        {code, std::vector<std::uint8_t>(bytes, bytes + self.probe_bytes), jit, library_options});
    *library = reinterpret_cast<CUlibrary>(std::uintptr_t{0x2000} + self.library_loads.size());
    return self.library_load_result;
  }
  static CUresult library_unload(CUlibrary library) {
    instance().unloaded_libraries.push_back(library);
    return CUDA_SUCCESS;
  }
  static CUresult library_get_kernel_count(unsigned* count, CUlibrary) {
    *count = 1;
    return instance().kernel_count_result;
  }
  static CUresult module_load_data(CUmodule* module, const void* image) {
    ScriptedDriver& self = instance();
    const auto* bytes = static_cast<const std::uint8_t*>(image);
    self.loaded.emplace_back(bytes, bytes + self.probe_bytes);
    CUresult result = CUDA_SUCCESS;
    if (!self.load_results.empty()) {
      result = self.load_results.front();
      self.load_results.pop_front();
    }
    if (result == CUDA_SUCCESS) *module = a_module();
    return result;
  }
  static CUresult module_load_data_ex(CUmodule* module, const void* image, unsigned count, CUjit_option*, void**) {
    ScriptedDriver& self = instance();
    self.loaded_ex.push_back(image);
    self.loaded_ex_option_counts.push_back(count);
    if (self.load_ex_result == CUDA_SUCCESS) *module = a_module();
    return self.load_ex_result;
  }
  static CUresult module_unload(CUmodule) { return CUDA_SUCCESS; }
  static CUresult link_create(unsigned, CUjit_option*, void**, CUlinkState* state) {
    *state = reinterpret_cast<CUlinkState>(std::uintptr_t{0x2000});
    return CUDA_SUCCESS;
  }
  static CUresult link_add_data(CUlinkState, CUjitInputType, void* data, std::size_t size, const char*, unsigned,
                                CUjit_option*, void**) {
    // `size` counts the PTX's NUL (cuLinkAddData's contract for text input).
    instance().linked_ptx.emplace_back(static_cast<const char*>(data), size > 0 ? size - 1 : 0);
    return instance().link_add_result;
  }
  static CUresult link_complete(CUlinkState, void** cubin, std::size_t* size) {
    *cubin = instance().linked_cubin.data();
    *size = instance().linked_cubin.size();
    return CUDA_SUCCESS;
  }
  static CUresult link_destroy(CUlinkState) { return CUDA_SUCCESS; }
};

}  // namespace jitcache::testing
