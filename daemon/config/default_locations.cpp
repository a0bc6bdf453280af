#include <daemon/config/config.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <common/default_paths.hpp>

namespace jitcache::daemon::config {

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : std::string();
}

// systemd passes a colon-separated list when a unit names several directories; the first is ours.
std::string first_systemd_directory(const char* name) {
  std::string value = env_or_empty(name);
  return value.substr(0, value.find(':'));
}

}  // namespace

std::string default_socket_path() {
  if (std::string runtime = first_systemd_directory("RUNTIME_DIRECTORY"); !runtime.empty()) {
    return runtime + "/jitcached.sock";
  }
  if (::geteuid() == 0) return common::k_system_socket_path;
  return common::user_socket_path();
}

std::string default_state_dir() {
  if (std::string state = first_systemd_directory("STATE_DIRECTORY"); !state.empty()) return state;
  if (::geteuid() == 0) return "/var/lib/jitcache";
  if (std::string xdg = env_or_empty("XDG_STATE_HOME"); !xdg.empty()) return xdg + "/jitcache";
  if (std::string home = env_or_empty("HOME"); !home.empty()) return home + "/.local/state/jitcache";
  return "/tmp/jitcache-" + std::to_string(::getuid()) + "/state";
}

// Rationale: the system service runs as its own user, for whom common::default_config_file() is a
// file under its HOME; `ConfigurationDirectory=jitcache` (packaging/systemd/jitcached.service) is how
// systemd tells the daemon that /etc/jitcache is its configuration directory.
std::string default_config_file() {
  if (std::string config = first_systemd_directory("CONFIGURATION_DIRECTORY"); !config.empty()) {
    return config + "/jitcached.toml";
  }
  return common::default_config_file();
}

}  // namespace jitcache::daemon::config
