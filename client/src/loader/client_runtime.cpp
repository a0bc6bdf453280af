#include <client/src/loader/client_runtime.hpp>

namespace jitcache::client::loader {

ClientRuntime& ClientRuntime::instance() {
  static ClientRuntime* runtime = new ClientRuntime();
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
    m_daemon = std::move(link);
  }
  m_counters.reset();
}

}  // namespace jitcache::client::loader
