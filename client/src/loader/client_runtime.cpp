#include <client/src/loader/client_runtime.hpp>

#include <pthread.h>

namespace jitcache::client::loader {

namespace {

// Rationale: fork() copies a mutex another thread holds, locked, into a child that has no such
// thread, and the child's first load would wait for ever. The handlers hold the runtime's and the
// current daemon link's mutexes across fork() (both are held only briefly, never across I/O), so
// both processes start with them free.
ClientRuntime* g_forking_runtime = nullptr;
DaemonLink* g_forking_link = nullptr;

}  // namespace

void ClientRuntime::before_fork() {
  ClientRuntime& runtime = *g_forking_runtime;
  runtime.m_mutex.lock();
  g_forking_link = runtime.m_daemon.get();
  if (g_forking_link != nullptr) g_forking_link->m_mutex.lock();
}

void ClientRuntime::after_fork() {
  if (g_forking_link != nullptr) g_forking_link->m_mutex.unlock();
  g_forking_link = nullptr;
  g_forking_runtime->m_mutex.unlock();
}

ClientRuntime& ClientRuntime::instance() {
  static ClientRuntime* runtime = [] {
    auto* created = new ClientRuntime();
    g_forking_runtime = created;
    ::pthread_atfork(&ClientRuntime::before_fork, &ClientRuntime::after_fork, &ClientRuntime::after_fork);
    return created;
  }();
  return *runtime;
}

const common::Result<std::shared_ptr<const driver::DriverApi>>& ClientRuntime::driver() {
  std::call_once(m_driver_once, [this] {
    m_driver = std::make_unique<common::Result<std::shared_ptr<const driver::DriverApi>>>(
        driver::open_driver(driver::default_driver_path()));
  });
  return *m_driver;
}

std::shared_ptr<DaemonLink> ClientRuntime::daemon() {
  std::lock_guard lock(m_mutex);
  if (!m_daemon) m_daemon = std::make_shared<DaemonLink>(resolve_settings(nullptr));
  return m_daemon;
}

void ClientRuntime::configure(const jitcache_config* config) {
  auto link = std::make_shared<DaemonLink>(resolve_settings(config));
  {
    std::lock_guard lock(m_mutex);
    m_daemon.swap(link);
  }
  // The replaced link sends its hit notes as it goes: after the lock, which is never held across I/O.
  link.reset();
  m_counters.reset();
}

}  // namespace jitcache::client::loader
