#include <daemon/remote/http/connection_pool.hpp>

#include <algorithm>
#include <string>

namespace jitcache::daemon::remote::http {

ConnectionPool::ConnectionPool(std::size_t capacity, std::chrono::milliseconds idle_limit)
    : m_capacity(std::max<std::size_t>(capacity, 1)), m_idle_limit(idle_limit) {}

ConnectionPool::Slot::~Slot() {
  if (m_pool != nullptr) m_pool->give_back(std::move(m_connection));
}

common::Result<ConnectionPool::Slot> ConnectionPool::acquire(Deadline deadline) {
  std::vector<std::unique_ptr<HttpConnection>> stale;  // closed after the lock is released
  std::unique_lock lock(m_mutex);
  if (!m_slot_free.wait_until(lock, deadline, [this] { return m_in_use < m_capacity; })) {
    return common::make_error(common::ErrorCode::timeout,
                              "all " + std::to_string(m_capacity) +
                                  " connections to the server stayed in use until the deadline");
  }
  ++m_in_use;
  const auto now = Clock::now();
  while (!m_idle.empty()) {
    std::unique_ptr<HttpConnection> connection = std::move(m_idle.back());
    m_idle.pop_back();
    if (now - connection->idle_since() <= m_idle_limit) {
      lock.unlock();
      return Slot(this, std::move(connection));
    }
    stale.push_back(std::move(connection));
  }
  lock.unlock();
  return Slot(this, nullptr);
}

void ConnectionPool::give_back(std::unique_ptr<HttpConnection> connection) {
  if (connection && !connection->reusable()) connection.reset();
  {
    const std::lock_guard lock(m_mutex);
    --m_in_use;
    if (connection) m_idle.push_back(std::move(connection));
  }
  m_slot_free.notify_one();
}

}  // namespace jitcache::daemon::remote::http
