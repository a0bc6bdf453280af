#include <proto/linker_identity.hpp>

#include <string>

namespace jitcache::proto {

DriverId nvjitlink_driver_id(unsigned major, unsigned minor, std::uint64_t library_size) {
  return DriverId{major * 1000 + minor * 10, "nvjitlink-" + std::to_string(major) + "." + std::to_string(minor) + "-" +
                                                 std::to_string(library_size)};
}

}  // namespace jitcache::proto
