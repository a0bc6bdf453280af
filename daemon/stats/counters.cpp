#include <daemon/stats/counters.hpp>

namespace jitcache::daemon::stats {

void Counters::count_error(proto::Status status) {
  const auto index = static_cast<std::size_t>(status);
  if (index < m_errors_by_status.size()) add(m_errors_by_status[index]);
}

std::vector<std::pair<std::string, std::uint64_t>> Counters::snapshot() const {
  auto value = [](const Counter& c) { return c.load(std::memory_order_relaxed); };
  std::vector<std::pair<std::string, std::uint64_t>> out{
      {"requests", value(requests)},
      {"hits", value(hits)},
      {"misses", value(misses)},
      {"misses_quarantined", value(misses_quarantined)},
      {"misses_corrupt", value(misses_corrupt)},
      {"fast_key_lookups", value(fast_key_lookups)},
      {"fast_key_hits", value(fast_key_hits)},
      {"images_by_descriptor", value(images_by_descriptor)},
      {"images_by_descriptor_failed", value(images_by_descriptor_failed)},
      {"published_hits", value(published_hits)},
      {"puts", value(puts)},
      {"put_bytes", value(put_bytes)},
      {"removes", value(removes)},
      {"failure_reports", value(failure_reports)},
      {"quarantines", value(quarantines)},
      {"reports_held", value(reports_held)},
      {"reports_rate_limited", value(reports_rate_limited)},
      {"bytes_served", value(bytes_served)},
      {"connections", value(connections)},
      {"connections_total", value(connections_total)},
      {"connections_refused", value(connections_refused)},
      {"connections_refused_per_uid", value(connections_refused_per_uid)},
      {"accept_failures", value(accept_failures)},
      {"requests_refused_bytes", value(requests_refused_bytes)},
      {"requests_refused_bytes_per_uid", value(requests_refused_bytes_per_uid)},
      {"dropped_idle", value(dropped_idle)},
      {"dropped_deadline", value(dropped_deadline)},
      {"dropped_protocol", value(dropped_protocol)},
  };
  for (std::size_t i = 1; i < m_errors_by_status.size(); ++i) {
    out.emplace_back("errors." + std::string(proto::status_name(static_cast<proto::Status>(i))),
                     value(m_errors_by_status[i]));
  }
  return out;
}

}  // namespace jitcache::daemon::stats
