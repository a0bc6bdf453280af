#include <daemon/compile/worker_path.hpp>

#include <unistd.h>

#include <filesystem>
#include <system_error>

#ifndef JITCACHE_INSTALLED_WORKER_PATH
#define JITCACHE_INSTALLED_WORKER_PATH "/usr/local/libexec/jitcache/jitcache-compile"
#endif
#ifndef JITCACHE_WORKER_FROM_DAEMON
#define JITCACHE_WORKER_FROM_DAEMON "../libexec/jitcache/jitcache-compile"
#endif

namespace jitcache::daemon::compile {

std::string default_worker_path() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = self.parent_path() / "jitcache-compile";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
    // Installed under whatever prefix the package chose (/usr/sbin/jitcached ->
    // /usr/libexec/jitcache/jitcache-compile), not only the one this build was configured with.
    const auto installed = (self.parent_path() / JITCACHE_WORKER_FROM_DAEMON).lexically_normal();
    if (::access(installed.c_str(), X_OK) == 0) return installed.string();
  }
  return JITCACHE_INSTALLED_WORKER_PATH;
}

}  // namespace jitcache::daemon::compile
