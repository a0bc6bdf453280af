// How a preload wrapper hands a load to the cache (api/cached_load.hpp) without ever making it
// worse: when the cache cannot open the driver, the driver lacks what the load flow needs, or
// anything inside throws, the real function runs with the caller's exact arguments.
// Thread safety: as cached_load.
#pragma once

#include <cuda.h>

#include <functional>

#include <client/src/api/cached_load.hpp>
#include <client/src/driver/driver_api.hpp>

namespace jitcache::client::preload {

// The driver as the cache opened it, when it can load modules; nullptr otherwise.
const driver::DriverApi* cache_driver();

// `real_call` is the real function with the caller's arguments, for every case the cache cannot
// take; `needs_libraries` says the target loads libraries (the driver must offer cuLibraryLoadData).
CUresult run_cached(const api::CachedLoadCall& call, const api::MakeTarget& make_target,
                    const std::function<CUresult()>& real_call, bool needs_libraries = false);

}  // namespace jitcache::client::preload
