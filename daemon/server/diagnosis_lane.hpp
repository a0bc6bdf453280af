// The lane EXPLAIN and MISSES run on (Lane::diagnosis, request_handler.hpp): one thread of its own
// and a bounded queue, so that diagnosis never runs on, or waits in front of, the worker threads
// that serve LOOKUP, and one uid's flood of it waits behind itself.
//
// Rationale: a LOOKUP runs on the worker thread that owns its connection (connection.cpp); an
// EXPLAIN there would hold that thread, and every connection it serves, for as long as it takes.
// Here it costs LOOKUP nothing but a read connection of its own (run_daemon.cpp counts it). At most
// k_per_uid requests of one uid and k_total in all are queued or running; one over is answered
// `busy` at once, so a uid that floods it gets `busy`, and another uid's EXPLAIN waits behind at
// most k_per_uid of each other uid's (each a bounded number of index probes:
// daemon/store/near_entries_sql.hpp).
//
// Thread safety: try_enter() and leave() may be called from any thread; executor() is the pool's.
#pragma once

#include <sys/types.h>

#include <atomic>

#include <boost/asio/thread_pool.hpp>

#include <daemon/policy/uid_connection_counts.hpp>

namespace jitcache::daemon::server {

class DiagnosisLane {
 public:
  static constexpr unsigned k_per_uid = 2;
  static constexpr unsigned k_total = 16;

  DiagnosisLane() : m_pool(1), m_per_uid(k_per_uid) {}
  DiagnosisLane(const DiagnosisLane&) = delete;
  DiagnosisLane& operator=(const DiagnosisLane&) = delete;

  // false: `uid` has k_per_uid requests queued or running, or the lane has k_total.
  bool try_enter(uid_t uid);
  void leave(uid_t uid);

  boost::asio::thread_pool::executor_type executor() { return m_pool.get_executor(); }
  // Waits for what is queued to finish (server shutdown).
  void join() { m_pool.join(); }

 private:
  boost::asio::thread_pool m_pool;
  policy::UidConnectionCounts m_per_uid;
  std::atomic<unsigned> m_total{0};
};

}  // namespace jitcache::daemon::server
