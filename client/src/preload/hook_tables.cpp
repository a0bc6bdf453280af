#include <client/src/preload/hook.hpp>

namespace jitcache::client::preload {

std::array<std::span<const Hook>, 6> hook_tables() {
  return {module_hooks(), library_hooks(), link_hooks(), nvjitlink_hooks(), nvrtc_hooks(), proc_address_hooks()};
}

}  // namespace jitcache::client::preload
