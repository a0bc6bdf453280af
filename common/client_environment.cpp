#include <common/client_environment.hpp>

#include <strings.h>

#include <cstdlib>

namespace jitcache::common {

namespace {

std::string_view type_name(EnvType type) {
  switch (type) {
    case EnvType::flag: return "flag";
    case EnvType::path: return "path";
    case EnvType::microseconds: return "microseconds";
    case EnvType::milliseconds: return "milliseconds";
    case EnvType::users: return "users";
  }
  return "text";
}

}  // namespace

std::optional<std::string> client_env(std::string_view name) {
  // secure_getenv: in a set-user-ID or otherwise secure-execution process the environment is the
  // caller's, and a variable here names a library to load, a socket to trust or a file to write.
  const char* value = ::secure_getenv(std::string(name).c_str());
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

bool flag_value(const char* value, bool default_value) {
  if (value == nullptr || *value == '\0') return default_value;
  for (const char* off : {"0", "false", "no", "off"}) {
    if (::strcasecmp(value, off) == 0) return false;
  }
  return true;
}

bool client_env_flag(std::string_view name, bool default_value) {
  return flag_value(::secure_getenv(std::string(name).c_str()), default_value);
}

std::string client_environment_markdown() {
  std::string out = "| variable | type | default | meaning |\n|---|---|---|---|\n";
  for (const ClientEnvVariable& variable : k_client_environment) {
    out += "| `" + std::string(variable.name) + "` | " + std::string(type_name(variable.type)) + " | " +
           std::string(variable.default_text) + " | " + std::string(variable.meaning) + " |\n";
  }
  return out;
}

}  // namespace jitcache::common
