#include <daemon/remote/redis/connection_pool.hpp>

#include <string>
#include <utility>

namespace jitcache::daemon::remote {

ConnectionPool::Lease::Lease(Lease&& other) noexcept
    : m_pool(std::exchange(other.m_pool, nullptr)),
      m_connection(std::move(other.m_connection)),
      m_reused(other.m_reused) {}

ConnectionPool::Lease::~Lease() {
  if (m_pool != nullptr) m_pool->give_back(std::move(m_connection));
}

ConnectionPool::ConnectionPool(RedisNodeAddress address, RedisLogin login, std::size_t capacity,
                               RedisCounterCells& counters)
    : m_address(std::move(address)),
      m_login(std::move(login)),
      m_capacity(capacity == 0 ? 1 : capacity),
      m_counters(counters) {}

ConnectionPool::~ConnectionPool() = default;

common::Result<ConnectionPool::Lease> ConnectionPool::acquire(Deadline deadline) {
  {
    std::unique_lock lock(m_mutex);
    bool waited = false;
    while (m_idle.empty() && m_open >= m_capacity) {
      if (!waited) {
        RedisCounterCells::add(m_counters.pool_waits);
        waited = true;
      }
      if (m_returned.wait_until(lock, deadline) == std::cv_status::timeout && m_idle.empty() && m_open >= m_capacity) {
        // no_space, not timeout: the server may be fine and only this host's pool too small for its
        // load; the circuit breaker must not take that for a dead server (circuit_breaker.hpp).
        return common::make_error(common::ErrorCode::no_space, "redis " + to_string(m_address) + ": all " +
                                                                   std::to_string(m_capacity) +
                                                                   " connections stayed busy until the deadline");
      }
    }
    if (!m_idle.empty()) {
      auto connection = std::move(m_idle.back());
      m_idle.pop_back();
      return Lease(this, std::move(connection), true);
    }
    ++m_open;  // room reserved while connecting, outside the lock
  }
  auto opened = RedisConnection::open(m_address, m_login, deadline);
  if (!opened) {
    {
      std::lock_guard lock(m_mutex);
      --m_open;
    }
    m_returned.notify_one();
    return std::move(opened).error();
  }
  RedisCounterCells::add(m_counters.connections_opened);
  return Lease(this, std::move(opened).value(), false);
}

void ConnectionPool::give_back(std::unique_ptr<RedisConnection> connection) {
  const bool keep = connection && !connection->broken();
  if (!keep) RedisCounterCells::add(m_counters.connections_discarded);
  {
    std::lock_guard lock(m_mutex);
    if (keep) {
      m_idle.push_back(std::move(connection));
    } else {
      --m_open;
    }
  }
  connection.reset();  // a broken one is closed outside the lock
  m_returned.notify_one();
}

void ConnectionPool::close_idle() {
  std::vector<std::unique_ptr<RedisConnection>> closing;
  {
    std::lock_guard lock(m_mutex);
    closing.swap(m_idle);
    m_open -= closing.size();
  }
  if (!closing.empty()) m_returned.notify_all();
}

}  // namespace jitcache::daemon::remote
