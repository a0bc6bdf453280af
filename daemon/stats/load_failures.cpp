#include <daemon/stats/load_failures.hpp>

namespace jitcache::daemon::stats {

void LoadFailures::count(std::uint32_t cu_result) {
  std::size_t slot = 0;
  for (const proto::CuResultName& row : proto::k_cu_result_names) {
    if (!row.load_failure) continue;
    if (row.code == cu_result) break;
    ++slot;
  }
  m_counts[slot].fetch_add(1, std::memory_order_relaxed);
}

std::vector<LoadFailures::Row> LoadFailures::snapshot() const {
  std::vector<Row> rows;
  rows.reserve(m_counts.size());
  std::size_t slot = 0;
  for (const proto::CuResultName& row : proto::k_cu_result_names) {
    if (!row.load_failure) continue;
    rows.push_back({row.code, row.name, m_counts[slot++].load(std::memory_order_relaxed)});
  }
  rows.push_back({std::nullopt, "other", m_counts.back().load(std::memory_order_relaxed)});
  return rows;
}

}  // namespace jitcache::daemon::stats
