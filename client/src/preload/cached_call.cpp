#include <client/src/preload/cached_call.hpp>

#include <client/src/loader/client_runtime.hpp>
#include <client/src/preload/symbol_routes.hpp>

namespace jitcache::client::preload {

const driver::DriverApi* cache_driver() {
  try {
    const auto& api = loader::ClientRuntime::instance().driver();
    if (!api || !(*api)->can_load()) return nullptr;
    return api->get();
  } catch (...) {
    return nullptr;
  }
}

CUresult run_cached(const api::CachedLoadCall& call, const api::MakeTarget& make_target,
                    const std::function<CUresult()>& real_call, bool needs_libraries) {
  if (preload_disabled()) return real_call();
  const driver::DriverApi* driver = cache_driver();
  if (driver == nullptr || (needs_libraries && driver->library_load_data == nullptr)) return real_call();
  try {
    return api::cached_load(call, make_target);
  } catch (...) {
    // Only reachable if not even the load record could be made (no memory): the driver's own call.
    return real_call();
  }
}

}  // namespace jitcache::client::preload
