// cuLink* sessions: not cached yet; the driver's own functions are reached directly.
#include <client/src/preload/hook.hpp>

namespace jitcache::client::preload {

std::span<const Hook> link_hooks() { return {}; }

}  // namespace jitcache::client::preload
