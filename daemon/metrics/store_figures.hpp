// The store's part of a scrape (totals and bytes by namespace), read at most once per
// k_store_figures_ttl however often the endpoint is scraped.
// Rationale: both reads borrow one of the store's read connections, which the worker threads use
// for LOOKUPs. Each read is cheap (one row of `totals`, one row per namespace of `namespace_totals`),
// but a scraper gone wrong (a tight loop, several Prometheus replicas) must not turn into a steady
// share of the readers; two seconds is far below any useful scrape interval.
// Thread safety: get() from one thread (the metrics thread).
#pragma once

#include <chrono>
#include <optional>

#include <daemon/store/store.hpp>
#include <daemon/store/tenancy.hpp>

namespace jitcache::daemon::metrics {

inline constexpr auto k_store_figures_ttl = std::chrono::seconds(2);
// With metrics_per_uid, the namespaces named one by one besides the shared one; the rest are summed
// as "other". Rationale: one series per uid is fine on a host with a few users; 20 bounds what a
// host with thousands of batch uids costs Prometheus.
inline constexpr unsigned k_top_namespaces = 20;

struct StoreFigures {
  std::optional<store::Totals> totals;               // nullopt: the read failed (logged)
  std::optional<store::NamespaceTotals> namespaces;  // nullopt: the read failed (logged)
};

class StoreFiguresCache {
 public:
  // `top`: how many uid namespaces to read one by one (Tenancy::namespace_totals); 0 sums them all.
  StoreFiguresCache(store::Store& store, store::Tenancy& tenancy, unsigned top)
      : m_store(store), m_tenancy(tenancy), m_top(top) {}
  const StoreFigures& get();

 private:
  using Clock = std::chrono::steady_clock;
  store::Store& m_store;
  store::Tenancy& m_tenancy;
  unsigned m_top;
  StoreFigures m_figures;
  std::optional<Clock::time_point> m_read_at;
};

}  // namespace jitcache::daemon::metrics
