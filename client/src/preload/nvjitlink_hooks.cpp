// nvJitLink sessions: not cached yet; nvJitLink's own functions are reached directly.
#include <client/src/preload/hook.hpp>

namespace jitcache::client::preload {

std::span<const Hook> nvjitlink_hooks() { return {}; }

}  // namespace jitcache::client::preload
