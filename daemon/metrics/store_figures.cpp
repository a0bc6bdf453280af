#include <daemon/metrics/store_figures.hpp>

#include <spdlog/spdlog.h>

namespace jitcache::daemon::metrics {

const StoreFigures& StoreFiguresCache::get() {
  const auto now = Clock::now();
  if (m_read_at && now - *m_read_at < k_store_figures_ttl) return m_figures;
  m_read_at = now;
  auto totals = m_store.totals();
  if (totals) {
    m_figures.totals = *totals;
  } else {
    m_figures.totals.reset();
    spdlog::warn("metrics: cannot read the store totals: {}", totals.error().message);
  }
  auto namespaces = m_tenancy.namespace_totals(m_top);
  if (namespaces) {
    m_figures.namespaces = std::move(*namespaces);
  } else {
    m_figures.namespaces.reset();
    spdlog::warn("metrics: cannot read the bytes by namespace: {}", namespaces.error().message);
  }
  return m_figures;
}

}  // namespace jitcache::daemon::metrics
