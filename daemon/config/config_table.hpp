// The one table of configuration keys (ccache's k_config_key_table style). Each key has one name
// used three ways: `name` in the TOML file, `--name-with-dashes` on the command line, and
// `JITCACHE_NAME` in the environment. docs/configuration.md is generated from this table
// (`jitcached --print-config-reference`) and a test keeps them equal. Thread safety: immutable.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include <common/result.hpp>
#include <daemon/config/config.hpp>

namespace jitcache::daemon::config {

enum class ValueKind {
  path,
  boolean,
  size,
  duration,
  count,
  log_level,
  group,
  user_list,
  group_list,
  address,
  url_list,
  path_list,
  fraction,
  eviction_policy,
};

// List kinds take a TOML array in the file and comma-separated text from a flag or variable.
inline bool is_list_kind(ValueKind kind) {
  return kind == ValueKind::user_list || kind == ValueKind::group_list || kind == ValueKind::url_list ||
         kind == ValueKind::path_list;
}

struct ConfigKey {
  std::string_view name;
  ValueKind kind;
  std::string_view description;
  std::function<common::Result<void>(Config&, std::string_view)> set;
  std::function<std::string(const Config&)> get;
  // Shown in docs instead of get(defaults) when the default depends on the environment.
  std::string_view default_description = {};
  bool in_file = true;  // false: flag and environment only (e.g. the config file's own path)
};

std::span<const ConfigKey> config_keys();
const ConfigKey* find_config_key(std::string_view name);

std::string flag_name(const ConfigKey& key);  // "--state-dir"
std::string env_name(const ConfigKey& key);   // "JITCACHE_STATE_DIR"
std::string_view kind_name(ValueKind kind);   // "size", "duration", ...

// The Markdown table of every key, for docs/configuration.md.
std::string config_reference_markdown();

}  // namespace jitcache::daemon::config
