// The lanes ops run on (daemon/ops/op_table.hpp Lane), as the server owns them: a thread pool for
// each lane but the worker's, and the lane's admission count where the op table gives its rows
// limits (LaneLimits): at most `per_uid` requests of one uid and `total` in all queued or running;
// one over is answered `busy` at once.
//
// Rationale: a LOOKUP runs on the worker thread that owns its connection (connection.cpp); an
// EXPLAIN or an export there would hold that thread, and every connection it serves, for as long
// as it takes. On a lane of its own it costs LOOKUP nothing, and the limits keep one uid's flood
// waiting behind itself.
//
// Thread safety: try_enter() and leave() may be called from any thread; the pools are Asio's.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <memory>

#include <boost/asio/thread_pool.hpp>

#include <daemon/ops/op_table.hpp>
#include <daemon/policy/uid_connection_counts.hpp>

namespace jitcache::daemon::server {

class LaneGate {
 public:
  explicit LaneGate(ops::LaneLimits limits) : m_limits(limits), m_per_uid(limits.per_uid) {}
  LaneGate(const LaneGate&) = delete;
  LaneGate& operator=(const LaneGate&) = delete;

  // false: `uid` has per_uid requests queued or running on the lane, or the lane has total.
  bool try_enter(uid_t uid);
  void leave(uid_t uid);
  ops::LaneLimits limits() const { return m_limits; }

 private:
  ops::LaneLimits m_limits;
  policy::UidConnectionCounts m_per_uid;
  std::atomic<unsigned> m_total{0};
};

class Lanes {
 public:
  Lanes();
  Lanes(const Lanes&) = delete;
  Lanes& operator=(const Lanes&) = delete;

  // The pool of `lane`; the worker lane has none (its work runs where it was read).
  boost::asio::thread_pool& pool(ops::Lane lane);
  // The admission count of `lane`, or null where its rows set no limits.
  LaneGate* gate(ops::Lane lane);
  // Waits for what is queued on every lane to finish (server shutdown).
  void join();

 private:
  static constexpr std::size_t k_lanes = 5;
  std::array<std::unique_ptr<boost::asio::thread_pool>, k_lanes> m_pools;
  std::array<std::unique_ptr<LaneGate>, k_lanes> m_gates;
};

}  // namespace jitcache::daemon::server
