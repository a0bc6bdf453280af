// The process-wide state of libjitcache: the driver (opened once, on first use), the current
// configuration with its daemon connections, and the counters. Loads take a snapshot of the
// configuration when they start, so jitcache_configure() never pulls a connection from under a
// load in progress.
// Thread safety: every method may be called from any thread.
#pragma once

#include <memory>
#include <mutex>

#include <client/src/driver/driver_api.hpp>
#include <client/src/loader/client_counters.hpp>
#include <client/src/loader/daemon_link.hpp>

namespace jitcache::client::loader {

class ClientRuntime {
 public:
  // Never destroyed: a load on another thread may outlive static destruction at exit.
  static ClientRuntime& instance();

  // The driver, or why it cannot be opened; decided once per process.
  const common::Result<std::shared_ptr<const driver::DriverApi>>& driver();
  std::shared_ptr<DaemonLink> daemon();
  void configure(const jitcache_config* config);
  ClientCounters& counters() { return m_counters; }

 private:
  ClientRuntime() = default;
  // pthread_atfork handlers (client_runtime.cpp).
  static void before_fork();
  static void after_fork();

  std::once_flag m_driver_once;
  std::unique_ptr<common::Result<std::shared_ptr<const driver::DriverApi>>> m_driver;
  std::mutex m_mutex;
  std::shared_ptr<DaemonLink> m_daemon;
  ClientCounters m_counters;
};

}  // namespace jitcache::client::loader
