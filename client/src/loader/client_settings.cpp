#include <client/src/loader/client_settings.hpp>

#include <sys/stat.h>

#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

#include <toml++/toml.h>

#include <client/src/transport/default_socket.hpp>
#include <common/client_environment.hpp>
#include <common/default_paths.hpp>
#include <common/toml_non_ascii.hpp>
#include <proto/published_image.hpp>

namespace jitcache::client::loader {

namespace {

// The variable's value, "" when unset (common/client_environment.hpp: the table and its rules).
std::string env(const char* name) { return common::client_env(name).value_or(""); }

bool file_exists(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The first config file that exists, in precedence order; "" when none.
std::string config_file_path() {
  if (std::string named = env("JITCACHE_CONFIG"); !named.empty()) return named;
  if (std::string user = common::default_config_file(); file_exists(user)) return user;
  if (file_exists(common::k_system_config_file)) return common::k_system_config_file;
  return {};
}

// The `socket` key of a daemon config file; "" when absent. Problems go to `notes`.
std::string socket_from_config_file(const std::string& path, std::string& notes) {
  try {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      notes += "config file " + path + " ignored: cannot read it; ";
      return {};
    }
    // toml++ must not see the text its whitespace test has undefined behaviour on (toml_non_ascii.hpp).
    if (common::find_misplaced_non_ascii(text.str())) {
      notes += "config file " + path + " ignored: non-ASCII text outside a comment or a quoted value; ";
      return {};
    }
    toml::table table = toml::parse(text.str(), path);
    if (auto socket = table["socket"].value<std::string>()) return *socket;
  } catch (const toml::parse_error& error) {
    notes += "config file " + path + " ignored: " + std::string(error.description()) + "; ";
  } catch (const std::exception& error) {
    notes += "config file " + path + " ignored: " + error.what() + "; ";
  }
  return {};
}

}  // namespace

ClientSettings resolve_settings(const jitcache_config* config) {
  ClientSettings settings;
  settings.daemon_trust = transport::DaemonTrust::from_environment();
  if (common::client_env_flag("JITCACHE_DISABLE", false)) {
    settings.disabled = true;
    settings.disabled_by = "JITCACHE_DISABLE=" + env("JITCACHE_DISABLE");
  }
  settings.quiet = common::client_env_flag("JITCACHE_QUIET", false);
  settings.published = common::client_env_flag("JITCACHE_PUBLISHED", true);
  if (std::string spin = env("JITCACHE_REPLY_SPIN_US"); !spin.empty()) {
    char* end = nullptr;
    const unsigned long long us = std::strtoull(spin.c_str(), &end, 10);
    if (end != nullptr && *end == '\0' && us <= static_cast<unsigned long long>(k_max_reply_spin.count())) {
      settings.reply_spin = std::chrono::microseconds(us);
    } else {
      settings.notes += "JITCACHE_REPLY_SPIN_US=" + spin + " ignored: not a number of microseconds from 0 to " +
                        std::to_string(k_max_reply_spin.count()) + "; ";
    }
  }

  if (std::string wait = env("JITCACHE_COMPILE_TIMEOUT_MS"); !wait.empty()) {
    char* end = nullptr;
    const unsigned long long ms = std::strtoull(wait.c_str(), &end, 10);
    if (end != nullptr && *end == '\0' && ms > 0 && ms <= 24ull * 3600 * 1000) {
      settings.compile_timeout = std::chrono::milliseconds(ms);
    } else {
      settings.notes +=
          "JITCACHE_COMPILE_TIMEOUT_MS=" + wait + " ignored: not a number of milliseconds from 1 to 86400000; ";
    }
  }

  if (config != nullptr) {
    // Fields after quiet exist only in a struct of this version or later (struct_size says which).
    const bool has_compile_timeout =
        config->struct_size >= offsetof(jitcache_config, compile_timeout_ms) + sizeof(config->compile_timeout_ms);
    if (has_compile_timeout && config->compile_timeout_ms != 0) {
      settings.compile_timeout = std::chrono::milliseconds(config->compile_timeout_ms);
    }
    if (config->disable != 0) {
      settings.disabled = true;
      settings.disabled_by = "jitcache_configure";
    }
    if (config->quiet != 0) settings.quiet = true;
    if (config->connect_timeout_ms != 0)
      settings.connect_timeout = std::chrono::milliseconds(config->connect_timeout_ms);
    if (config->request_timeout_ms != 0)
      settings.request_timeout = std::chrono::milliseconds(config->request_timeout_ms);
    if (config->socket_path != nullptr && *config->socket_path != '\0') {
      settings.socket_path = config->socket_path;
      settings.socket_source = "jitcache_configure";
      return settings;
    }
  }
  if (std::string socket = env("JITCACHE_SOCKET"); !socket.empty()) {
    settings.socket_path = socket;
    settings.socket_source = "JITCACHE_SOCKET";
    return settings;
  }
  if (std::string file = config_file_path(); !file.empty()) {
    if (std::string socket = socket_from_config_file(file, settings.notes); !socket.empty()) {
      settings.socket_path = socket;
      settings.socket_source = file;
      return settings;
    }
  }
  settings.socket_path = transport::default_socket(settings.daemon_trust);
  settings.socket_source = "default";
  return settings;
}

bool reads_published_copies(const ClientSettings& settings) {
  struct stat st {};
  return settings.published && ::stat(proto::published_dir_for(settings.socket_path).c_str(), &st) == 0;
}

}  // namespace jitcache::client::loader
