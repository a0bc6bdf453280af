#include <daemon/server/lanes.hpp>

#include <stdexcept>

#include <daemon/ops/bundle_service.hpp>

namespace jitcache::daemon::server {

bool LaneGate::try_enter(uid_t uid) {
  if (m_limits.total != 0 && m_total.fetch_add(1, std::memory_order_acq_rel) >= m_limits.total) {
    m_total.fetch_sub(1, std::memory_order_acq_rel);
    return false;
  }
  if (!m_per_uid.try_acquire(uid)) {
    if (m_limits.total != 0) m_total.fetch_sub(1, std::memory_order_acq_rel);
    return false;
  }
  return true;
}

void LaneGate::leave(uid_t uid) {
  m_per_uid.release(uid);
  if (m_limits.total != 0) m_total.fetch_sub(1, std::memory_order_acq_rel);
}

namespace {

// Rationale: one thread each for the writer (SQLite has one writer), maintenance and diagnosis
// (each a queue of its own, in order); the bundle lane a thread per operation the op table admits,
// so one whose file stalls waits alone.
std::size_t threads_of(ops::Lane lane) { return lane == ops::Lane::bundle ? ops::k_max_bundle_operations : 1; }

}  // namespace

Lanes::Lanes() {
  for (const ops::OpRow& row : ops::op_table()) {
    const auto index = static_cast<std::size_t>(row.lane);
    if (row.lane != ops::Lane::worker && !m_pools[index]) {
      m_pools[index] = std::make_unique<boost::asio::thread_pool>(threads_of(row.lane));
    }
    if ((row.limits.per_uid != 0 || row.limits.total != 0) && !m_gates[index]) {
      m_gates[index] = std::make_unique<LaneGate>(row.limits);
    }
  }
}

boost::asio::thread_pool& Lanes::pool(ops::Lane lane) {
  auto& pool = m_pools[static_cast<std::size_t>(lane)];
  if (!pool) throw std::logic_error("no pool for the " + std::string(ops::lane_name(lane)) + " lane");
  return *pool;
}

LaneGate* Lanes::gate(ops::Lane lane) { return m_gates[static_cast<std::size_t>(lane)].get(); }

void Lanes::join() {
  for (auto& pool : m_pools) {
    if (pool) pool->join();
  }
}

}  // namespace jitcache::daemon::server
