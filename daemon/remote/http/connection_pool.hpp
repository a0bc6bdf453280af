// The bounded pool of kept-alive connections to one HTTP server. At most `capacity` connections
// exist at once, in use or idle; a call that finds all of them in use waits, until its deadline,
// for one to come back, so a slow or silent server makes calls fail with timeout rather than make
// the daemon open socket after socket (remote_backend.hpp "Thread safety").
//
// A checked-out slot (ConnectionPool::Slot) holds an idle connection to reuse, or none, and then
// the right to open one; it goes back when the Slot is destroyed: its connection kept for the next
// call when it is still reusable, closed otherwise. Idle connections are reused newest first, and
// one idle longer than the idle limit is closed instead (the server may be closing it).
//
// Thread safety: acquire and Slot's destructor may run on any threads at once; one Slot belongs to
// one thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include <common/result.hpp>
#include <daemon/remote/backend/remote_backend.hpp>
#include <daemon/remote/http/http_connection.hpp>

namespace jitcache::daemon::remote::http {

class ConnectionPool {
 public:
  class Slot {
   public:
    Slot(Slot&& other) noexcept : m_pool(other.m_pool), m_connection(std::move(other.m_connection)) {
      other.m_pool = nullptr;
    }
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot();

    // The connection to use: a reused one, or null (open one and store it here).
    std::unique_ptr<HttpConnection>& connection() { return m_connection; }
    // Closes the connection now, keeping the slot (to open another in it).
    void discard() { m_connection.reset(); }

   private:
    friend class ConnectionPool;
    Slot(ConnectionPool* pool, std::unique_ptr<HttpConnection> connection)
        : m_pool(pool), m_connection(std::move(connection)) {}
    ConnectionPool* m_pool;
    std::unique_ptr<HttpConnection> m_connection;
  };

  ConnectionPool(std::size_t capacity, std::chrono::milliseconds idle_limit);

  // A slot, once one is free; timeout when none is before the deadline.
  common::Result<Slot> acquire(Deadline deadline);

 private:
  void give_back(std::unique_ptr<HttpConnection> connection);

  const std::size_t m_capacity;
  const std::chrono::milliseconds m_idle_limit;
  std::mutex m_mutex;
  std::condition_variable m_slot_free;
  std::size_t m_in_use = 0;
  std::vector<std::unique_ptr<HttpConnection>> m_idle;  // the most recently used last
};

}  // namespace jitcache::daemon::remote::http
