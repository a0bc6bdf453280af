// The driver entry points libjitcache resolves, each with the cuGetProcAddress version it asks for
// (the API version whose ABI our cuda.h declares for that name; cudaTypedefs.h PFN_*_vNNNN).
// Thread safety: constant data.
#pragma once

#include <array>
#include <cstddef>

namespace jitcache::client::driver {

struct EntryPoint {
  const char* name;  // the base name cuGetProcAddress takes ("cuLinkCreate", not "cuLinkCreate_v2")
  int version;       // 1000 * major + 10 * minor
  std::size_t slot;  // index into the resolution order of driver_api.cpp
  // Needed only by some callers (the preload library's cuLibrary* path): a driver without it is
  // not "missing" anything the cache needs; the caller checks the pointer.
  bool optional = false;
};

enum EntrySlot : std::size_t {
  k_driver_get_version,
  k_get_error_name,
  k_get_error_string,
  k_ctx_get_device,
  k_device_get_attribute,
  k_module_load_data,
  k_module_load_data_ex,
  k_module_unload,
  k_link_create,
  k_link_add_data,
  k_link_complete,
  k_link_destroy,
  k_device_get,
  k_device_get_count,
  k_library_load_data,
  k_library_unload,
  k_library_load_from_file,
  k_library_get_kernel_count,
  k_entry_point_count
};

inline constexpr std::array<EntryPoint, k_entry_point_count> k_entry_points{{
    {"cuDriverGetVersion", 2020, k_driver_get_version},
    {"cuGetErrorName", 6000, k_get_error_name},
    {"cuGetErrorString", 6000, k_get_error_string},
    {"cuCtxGetDevice", 2000, k_ctx_get_device},
    {"cuDeviceGetAttribute", 2000, k_device_get_attribute},
    {"cuModuleLoadData", 2000, k_module_load_data},
    {"cuModuleLoadDataEx", 2010, k_module_load_data_ex},
    {"cuModuleUnload", 2000, k_module_unload},
    // The _v2 ABI (size_t sizes) that cuda.h's cuLinkCreate / cuLinkAddData macros name.
    {"cuLinkCreate", 6050, k_link_create},
    {"cuLinkAddData", 6050, k_link_add_data},
    {"cuLinkComplete", 5050, k_link_complete},
    {"cuLinkDestroy", 5050, k_link_destroy},
    {"cuDeviceGet", 2000, k_device_get, true},
    {"cuDeviceGetCount", 2000, k_device_get_count, true},
    {"cuLibraryLoadData", 12000, k_library_load_data, true},
    {"cuLibraryUnload", 12000, k_library_unload, true},
    {"cuLibraryLoadFromFile", 12000, k_library_load_from_file, true},
    {"cuLibraryGetKernelCount", 12040, k_library_get_kernel_count, true},
}};

}  // namespace jitcache::client::driver
