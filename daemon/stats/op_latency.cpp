#include <daemon/stats/op_latency.hpp>

#include <algorithm>

namespace jitcache::daemon::stats {

void OpLatency::record(proto::Op op, std::chrono::microseconds elapsed) {
  auto slot = static_cast<std::size_t>(op);
  if (!is_latency_slot_shown(slot)) slot = 0;
  const auto us = static_cast<std::uint64_t>(std::max<std::int64_t>(elapsed.count(), 0));
  const auto bucket = std::lower_bound(k_latency_buckets.begin(), k_latency_buckets.end(), us,
                                       [](const LatencyBucket& b, std::uint64_t v) { return b.upper_us < v; });
  Histogram& h = m_ops[slot];
  h.buckets[static_cast<std::size_t>(bucket - k_latency_buckets.begin())].fetch_add(1, std::memory_order_relaxed);
  h.sum_us.fetch_add(us, std::memory_order_relaxed);
}

LatencySnapshot OpLatency::snapshot(std::size_t slot) const {
  LatencySnapshot out;
  if (slot >= k_latency_op_slots) return out;
  const Histogram& h = m_ops[slot];
  for (std::size_t i = 0; i < out.buckets.size(); ++i) out.buckets[i] = h.buckets[i].load(std::memory_order_relaxed);
  out.sum_us = h.sum_us.load(std::memory_order_relaxed);
  return out;
}

bool is_latency_slot_shown(std::size_t slot) {
  return slot == 0 || (slot < k_latency_op_slots && proto::is_known_op(static_cast<std::uint16_t>(slot)));
}

std::string_view latency_slot_name(std::size_t slot) {
  if (slot == 0 || slot >= k_latency_op_slots) return "unknown";
  return proto::op_name(static_cast<proto::Op>(slot));
}

}  // namespace jitcache::daemon::stats
