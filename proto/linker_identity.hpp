// The driver field of an nvJitLink link's key (docs/cache-key.md "Link sessions"): the nvJitLink
// library that linked it, computed the same way by libjitcache (for the library a program linked)
// and by the daemon's compile worker (for its own), so that the daemon compiles a program's link only
// for the very same library.
//
//   driver_api    1000 * major + 10 * minor, as nvJitLinkVersion gives them (13.0 → 13000)
//   driver_build  "nvjitlink-<major>.<minor>-<size of the library file in bytes>"
//
// Rationale: nvJitLinkVersion names only the release (13.0), while its ptxas changes between the
// updates of one release (docs/driver-facts.md §0.3 shows the JIT's output follows the build); the
// files are often named libnvJitLink.so.13 whatever the update (pip wheels, this toolkit), so the
// file's size stands for the build: one stat, where hashing a ~100 MB library would cost a hit more
// than the link. Two builds of one size would share entries [I].
// Thread safety: pure function.
#pragma once

#include <cstdint>

#include <proto/key.hpp>

namespace jitcache::proto {

DriverId nvjitlink_driver_id(unsigned major, unsigned minor, std::uint64_t library_size);

}  // namespace jitcache::proto
