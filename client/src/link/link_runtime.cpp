#include <client/src/link/link_runtime.hpp>

namespace jitcache::client::link {

namespace {

const driver::DriverApi* runtime_driver() {
  const auto& driver = loader::ClientRuntime::instance().driver();
  return driver ? driver->get() : nullptr;
}

}  // namespace

RuntimeEnvironment::RuntimeEnvironment(bool with_driver)
    : m_daemon(loader::ClientRuntime::instance().daemon()),
      m_port(m_daemon, loader::ClientRuntime::instance().counters()),
      m_environment{with_driver ? runtime_driver() : nullptr, m_port, m_daemon->settings(),
                    loader::ClientRuntime::instance().counters()} {}

bool RuntimeEnvironment::caching_disabled() { return loader::ClientRuntime::instance().daemon()->settings().disabled; }

}  // namespace jitcache::client::link
