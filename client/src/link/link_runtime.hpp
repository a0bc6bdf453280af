// A LinkEnvironment made from libjitcache's process-wide runtime (loader/client_runtime.hpp) for one
// call: the current configuration's daemon link with a cache port of its own, the driver, the
// counters. What the preload's link calls complete with.
// Thread safety: one RuntimeEnvironment per call; the runtime it reads is thread-safe.
#pragma once

#include <memory>

#include <client/src/link/link_environment.hpp>
#include <client/src/loader/client_runtime.hpp>
#include <client/src/loader/daemon_cache_port.hpp>

namespace jitcache::client::link {

class RuntimeEnvironment {
 public:
  // `with_driver`: open the driver (a cuLink* key needs it; an nvJitLink key does not).
  explicit RuntimeEnvironment(bool with_driver);
  const LinkEnvironment& get() const { return m_environment; }
  // Whether caching is off for this process (JITCACHE_DISABLE=1, or jitcache_configure).
  static bool caching_disabled();

 private:
  std::shared_ptr<loader::DaemonLink> m_daemon;
  loader::DaemonCachePort m_port;
  LinkEnvironment m_environment;
};

}  // namespace jitcache::client::link
