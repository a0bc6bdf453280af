// A fixed set of connections handed out one per call: acquire() blocks until one is free and the
// returned Lease gives it back when it goes out of scope. The store keeps its read connections here,
// so concurrent lookups each get their own connection (and WAL snapshot) and never share one.
//
// Thread safety: acquire() and Lease destruction may run on any thread; a leased connection is
// used by its holder alone. The pool must outlive every Lease.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace jitcache::daemon::store {

template <class Connection>
class ConnectionPool {
 public:
  class Lease {
   public:
    Lease(ConnectionPool* pool, Connection* connection) : m_pool(pool), m_connection(connection) {}
    Lease(Lease&& other) noexcept
        : m_pool(std::exchange(other.m_pool, nullptr)), m_connection(std::exchange(other.m_connection, nullptr)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (m_pool) m_pool->release(m_connection);
    }

    Connection& operator*() const { return *m_connection; }
    Connection* operator->() const { return m_connection; }

   private:
    ConnectionPool* m_pool;
    Connection* m_connection;
  };

  explicit ConnectionPool(std::vector<std::unique_ptr<Connection>> connections)
      : m_connections(std::move(connections)) {
    for (auto& connection : m_connections) m_free.push_back(connection.get());
  }

  // Rationale: waits without a deadline. Every holder is a store call that returns once its
  // statement finishes (SQLite's busy_timeout bounds lock waits), so a wait here is bounded by the
  // slowest read in progress; the server bounds concurrency above this.
  Lease acquire() {
    std::unique_lock lock(m_mutex);
    m_available.wait(lock, [this] { return !m_free.empty(); });
    Connection* connection = m_free.back();
    m_free.pop_back();
    return Lease(this, connection);
  }

  std::size_t size() const { return m_connections.size(); }

 private:
  void release(Connection* connection) {
    {
      std::lock_guard lock(m_mutex);
      m_free.push_back(connection);
    }
    m_available.notify_one();
  }

  std::vector<std::unique_ptr<Connection>> m_connections;
  std::mutex m_mutex;
  std::condition_variable m_available;
  std::vector<Connection*> m_free;
};

}  // namespace jitcache::daemon::store
