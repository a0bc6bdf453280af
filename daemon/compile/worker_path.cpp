#include <daemon/compile/worker_path.hpp>

#include <unistd.h>

#include <filesystem>
#include <system_error>

#ifndef JITCACHE_INSTALLED_WORKER_PATH
#define JITCACHE_INSTALLED_WORKER_PATH "/usr/local/libexec/jitcache/jitcache-compile"
#endif

namespace jitcache::daemon::compile {

std::string default_worker_path() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = self.parent_path() / "jitcache-compile";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return JITCACHE_INSTALLED_WORKER_PATH;
}

}  // namespace jitcache::daemon::compile
