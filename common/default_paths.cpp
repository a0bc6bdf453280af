#include <common/default_paths.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace jitcache::common {

namespace {
bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string non_empty_env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : std::string();
}
}  // namespace

std::string user_socket_path() {
  if (std::string runtime = non_empty_env("XDG_RUNTIME_DIR"); !runtime.empty()) {
    return runtime + "/jitcache/jitcached.sock";
  }
  const std::string uid = std::to_string(::getuid());
  if (exists("/run/user/" + uid)) return "/run/user/" + uid + "/jitcache/jitcached.sock";
  return "/tmp/jitcache-" + uid + "/jitcached.sock";
}

std::string default_config_file() {
  if (::geteuid() == 0) return k_system_config_file;
  if (std::string xdg = non_empty_env("XDG_CONFIG_HOME"); !xdg.empty()) return xdg + "/jitcache/jitcached.toml";
  if (std::string home = non_empty_env("HOME"); !home.empty()) return home + "/.config/jitcache/jitcached.toml";
  return {};
}

std::vector<std::string> default_client_sockets() {
  if (::getuid() == 0) return {k_system_socket_path};
  return {user_socket_path(), k_system_socket_path};
}

}  // namespace jitcache::common
