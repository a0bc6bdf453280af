#include <daemon/stats/counters.hpp>

namespace jitcache::daemon::stats {

void Counters::count_error(proto::Status status) {
  const auto index = static_cast<std::size_t>(status);
  if (index < m_errors_by_status.size()) add(m_errors_by_status[index]);
}

std::uint64_t Counters::errors(proto::Status status) const {
  const auto index = static_cast<std::size_t>(status);
  return index < m_errors_by_status.size() ? m_errors_by_status[index].load(std::memory_order_relaxed) : 0;
}

}  // namespace jitcache::daemon::stats
