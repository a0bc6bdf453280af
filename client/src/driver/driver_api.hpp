// The CUDA driver as libjitcache uses it: one object, opened at run time with dlopen and resolved
// entry point by entry point through cuGetProcAddress, so one client binary works with every driver
// and links nothing of CUDA's (docs/client-guide.md §1, docs/driver-facts.md §5).
//
// An entry point the driver does not offer is recorded, not fatal: the object says which ones are
// missing (name, the API version that introduced it, the version we asked for), and the loader
// degrades to what remains — without cuLink* it cannot JIT locally, without cuModuleLoadDataEx it
// cannot load at all. Thread safety: immutable after open(); the driver's functions are thread-safe.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <vector>

#include <common/result.hpp>

namespace jitcache::client::driver {

// The CUDA API version these headers describe (cuda.h CUDA_VERSION), e.g. 13000.
inline constexpr int k_built_against_api = CUDA_VERSION;

struct DriverApi {
  // Null when the driver lacks the entry point (see `missing`).
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuCtxGetDevice) ctx_get_device = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleLoadDataEx) module_load_data_ex = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuLinkCreate) link_create = nullptr;
  decltype(&::cuLinkAddData) link_add_data = nullptr;
  decltype(&::cuLinkComplete) link_complete = nullptr;
  decltype(&::cuLinkDestroy) link_destroy = nullptr;
  // Optional (entry_points.hpp): for images loaded as libraries (the preload library).
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetCount) device_get_count = nullptr;
  decltype(&::cuLibraryLoadData) library_load_data = nullptr;
  decltype(&::cuLibraryUnload) library_unload = nullptr;
  decltype(&::cuLibraryLoadFromFile) library_load_from_file = nullptr;
  decltype(&::cuLibraryGetKernelCount) library_get_kernel_count = nullptr;

  std::string library_path;  // the file dlopen found, symlinks resolved
  int api_version = 0;       // cuDriverGetVersion, e.g. 13000
  std::string build;         // the user-mode driver build, e.g. "580.159.04" (driver_identity.hpp)
  // One line per entry point the driver does not offer: "cuLinkCreate (CUDA 6.5 API, asked as
  // version 6050): not found in this driver".
  std::vector<std::string> missing;

  bool can_load() const { return module_load_data != nullptr && module_load_data_ex != nullptr; }
  bool can_jit() const {
    return link_create != nullptr && link_add_data != nullptr && link_complete != nullptr && link_destroy != nullptr;
  }
  bool can_query_device() const { return ctx_get_device != nullptr && device_get_attribute != nullptr; }
  // Why caching is off for this driver, or "" when every entry point the cache needs is there.
  std::string missing_summary() const;
};

// Opens `path` (a file name for the loader's search, or a path) and resolves every entry point.
// Errors: ErrorCode::unavailable when dlopen fails or the library has no cuGetProcAddress (the
// message carries dlerror()); the toolkit's stub libcuda is recognised by its CUDA_ERROR_STUB_LIBRARY.
// The library is never closed: modules loaded through it live as long as the process.
common::Result<std::shared_ptr<const DriverApi>> open_driver(const std::string& path);

// The path open_driver uses when nothing else is configured: $JITCACHE_CUDA_DRIVER or "libcuda.so.1".
std::string default_driver_path();

}  // namespace jitcache::client::driver
