#include <daemon/server/descriptor_plan.hpp>

#include <algorithm>

namespace jitcache::daemon::server {

DescriptorPlan plan_descriptors(std::uint64_t limit, std::uint64_t reserved, unsigned max_connections) {
  DescriptorPlan plan;
  plan.limit = limit;
  plan.reserved = reserved;
  const std::uint64_t available = limit > reserved ? limit - reserved : 0;
  plan.max_connections = static_cast<unsigned>(
      std::clamp<std::uint64_t>(available / 2 / k_descriptors_per_connection, 1, std::max(max_connections, 1u)));
  plan.cached_image_descriptors = static_cast<std::size_t>(available / 4);
  return plan;
}

}  // namespace jitcache::daemon::server
