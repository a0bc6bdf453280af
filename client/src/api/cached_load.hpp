// One load through the cache with every safety net the C API promises (jitcache.h): the driver
// opened once, the caller's arguments checked by the load flow, and any failure or exception inside
// the cache ending in the driver's own load with the caller's exact arguments. Used by the C API
// (c_api.cpp) for modules and by libjitcache-preload.so for cuModuleLoad* and cuLibraryLoad*.
// Thread safety: any number of loads at once, from any threads.
#pragma once

#include <cuda.h>

#include <functional>
#include <memory>
#include <string_view>

#include <client/src/driver/driver_api.hpp>
#include <client/src/loader/caller_options.hpp>
#include <client/src/loader/image_target.hpp>

namespace jitcache::client::api {

struct CachedLoadCall {
  const void* image = nullptr;
  unsigned num_options = 0;
  CUjit_option* options = nullptr;
  void** option_values = nullptr;
  // Connect to the daemon before the image is classified, so an idle daemon wakes meanwhile (the
  // C API's habit). The preload library does not: most of what it sees needs no daemon at all.
  bool connect_early = true;
  // The function the program called, as the process report names the load (process_report.hpp):
  // "jitcache_module_load_data_ex", "cuLibraryLoadData", ...
  std::string_view entry_point = "jitcache_module_load_data_ex";
};

// Makes the load's target once the driver is open; `options` outlives the target.
using MakeTarget = std::function<std::unique_ptr<loader::ImageTarget>(const driver::DriverApi& api,
                                                                      const loader::CallerOptions& options)>;

// CUDA_ERROR_NOT_INITIALIZED when the cache cannot open the driver (the record says why), and
// CUDA_ERROR_NOT_SUPPORTED when the driver cannot load modules; otherwise the load's result.
CUresult cached_load(const CachedLoadCall& call, const MakeTarget& make_target);

}  // namespace jitcache::client::api
