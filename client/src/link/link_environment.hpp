// What a link session needs from libjitcache when it completes: the driver (the device's arch and
// the driver's identity for a cuLink* key), the cache port, the configuration and the counters.
// The preload's calls take them from loader::ClientRuntime (link_calls.hpp); tests hand in their own.
// Thread safety: borrowed references, valid for one call.
#pragma once

#include <client/src/driver/driver_api.hpp>
#include <client/src/loader/cache_port.hpp>
#include <client/src/loader/client_counters.hpp>
#include <client/src/loader/client_settings.hpp>

namespace jitcache::client::link {

struct LinkEnvironment {
  const driver::DriverApi* driver = nullptr;  // null: the driver could not be opened (no cuLink* key)
  loader::CachePort& cache;
  const loader::ClientSettings& settings;
  loader::ClientCounters& counters;
};

}  // namespace jitcache::client::link
