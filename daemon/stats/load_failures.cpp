#include <daemon/stats/load_failures.hpp>

namespace jitcache::daemon::stats {

void LoadFailures::count(std::uint32_t cu_result) {
  std::size_t slot = k_counted_cu_results.size();
  for (std::size_t i = 0; i < k_counted_cu_results.size(); ++i) {
    if (k_counted_cu_results[i].code == cu_result) {
      slot = i;
      break;
    }
  }
  m_counts[slot].fetch_add(1, std::memory_order_relaxed);
}

std::vector<LoadFailures::Row> LoadFailures::snapshot() const {
  std::vector<Row> rows;
  rows.reserve(m_counts.size());
  for (std::size_t i = 0; i < k_counted_cu_results.size(); ++i) {
    rows.push_back({k_counted_cu_results[i].code, k_counted_cu_results[i].name,
                    m_counts[i].load(std::memory_order_relaxed)});
  }
  rows.push_back({std::nullopt, "other", m_counts.back().load(std::memory_order_relaxed)});
  return rows;
}

}  // namespace jitcache::daemon::stats
