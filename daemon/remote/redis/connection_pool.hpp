// The connections of one Redis node: at most `capacity` open at a time, busy or idle. A caller
// takes one (an idle one, or a new one while there is room) and gives it back when its exchange is
// done; a broken one is closed instead, which makes room. A caller that finds every connection
// busy waits until its deadline, then fails with timeout: a slow server cannot make the daemon
// open more sockets than the pool.
// Thread safety: acquire() and the leases it gives out may be used from any number of threads; the
// pool must outlive its leases.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include <common/result.hpp>
#include <daemon/remote/backend/remote_backend.hpp>
#include <daemon/remote/redis/redis_connection.hpp>
#include <daemon/remote/redis/redis_counters.hpp>
#include <daemon/remote/redis/redis_settings.hpp>

namespace jitcache::daemon::remote {

class ConnectionPool {
 public:
  // A connection lent to one caller; back to the pool when the lease ends, closed if broken.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease();
    RedisConnection& operator*() const { return *m_connection; }
    RedisConnection* operator->() const { return m_connection.get(); }
    // Whether it was opened before this lease: such a connection may have been closed by the
    // server while idle.
    bool reused() const { return m_reused; }

   private:
    friend class ConnectionPool;
    Lease(ConnectionPool* pool, std::unique_ptr<RedisConnection> connection, bool reused)
        : m_pool(pool), m_connection(std::move(connection)), m_reused(reused) {}
    ConnectionPool* m_pool;
    std::unique_ptr<RedisConnection> m_connection;
    bool m_reused;
  };

  ConnectionPool(RedisNodeAddress address, RedisLogin login, std::size_t capacity, RedisCounterCells& counters);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // An idle connection, or a new one (RedisConnection::open's errors) while fewer than capacity
  // are open; otherwise waits for one until `deadline` (timeout).
  common::Result<Lease> acquire(Deadline deadline);

  // Closes the idle connections: after one proved closed by the server, the others that idled as
  // long are likely closed too.
  void close_idle();

  const RedisNodeAddress& address() const { return m_address; }

 private:
  void give_back(std::unique_ptr<RedisConnection> connection);

  const RedisNodeAddress m_address;
  const RedisLogin m_login;
  const std::size_t m_capacity;
  RedisCounterCells& m_counters;
  std::mutex m_mutex;
  std::condition_variable m_returned;
  std::vector<std::unique_ptr<RedisConnection>> m_idle;  // guarded by m_mutex
  std::size_t m_open = 0;                                // idle, lent or being opened; guarded by m_mutex
};

}  // namespace jitcache::daemon::remote
