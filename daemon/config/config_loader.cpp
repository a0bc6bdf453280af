#include <daemon/config/config_loader.hpp>

#include <sys/stat.h>

#include <toml++/toml.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <common/toml_non_ascii.hpp>
#include <daemon/config/config_table.hpp>

namespace jitcache::daemon::config {

namespace {

void apply(Config& config, const ConfigKey& key, std::string_view value, const std::string& source) {
  if (auto result = key.set(config, value); !result) {
    throw ConfigError(source + ": " + std::string(key.name) + ": " + result.error().message);
  }
}

// TOML scalars become the same text a flag or variable would carry, so every source goes through
// the key's one parser. A bare integer is bytes for sizes and seconds for durations.
std::optional<std::string> toml_scalar_text(const toml::node& node) {
  if (auto s = node.value<std::string>()) return *s;
  if (node.is_boolean()) return node.value<bool>().value() ? "true" : "false";
  if (node.is_integer()) return std::to_string(node.value<std::int64_t>().value());
  if (node.is_floating_point()) {
    std::ostringstream out;
    out << node.value<double>().value();
    return out.str();
  }
  return std::nullopt;
}

// A list key's array becomes the comma-separated text its flag would carry.
// `commas_allowed`: a URL list, whose redis+cluster:// items list their seeds with commas (the
// remote tier splits the joined text back: a piece without "://" continues the URL before it).
std::optional<std::string> toml_list_text(const toml::array& array, bool commas_allowed) {
  std::string out;
  for (const auto& item : array) {
    auto text = toml_scalar_text(item);
    if (!text || item.is_boolean() || (!commas_allowed && text->find(',') != std::string::npos)) return std::nullopt;
    if (!out.empty()) out += ',';
    out += *text;
  }
  return out;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot read config file " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

void apply_config_file_text(Config& config, const std::string& text, const std::string& source_name) {
  // Before toml++ sees the text: the parser's undefined behaviour on some non-ASCII text
  // (toml_non_ascii.hpp) must not be reachable from a config file.
  if (auto offset = common::find_misplaced_non_ascii(text)) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(*offset), '\n');
    throw ConfigError(source_name + ":" + std::to_string(line) +
                      ": non-ASCII text outside a comment or a quoted value (keys and bare values are ASCII)");
  }
  toml::table table;
  try {
    table = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(source_name + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  for (const auto& [name, node] : table) {
    const std::string where = source_name + ":" + std::to_string(node.source().begin.line);
    const ConfigKey* key = find_config_key(name.str());
    if (key == nullptr || !key->in_file) {
      throw ConfigError(where + ": unknown key \"" + std::string(name.str()) +
                        "\" (see docs/configuration.md for the keys)");
    }
    auto value = is_list_kind(key->kind) && node.is_array()
                     ? toml_list_text(*node.as_array(), key->kind == ValueKind::url_list)
                     : toml_scalar_text(node);
    if (!value) {
      throw ConfigError(
          where + ": " + std::string(name.str()) +
          (is_list_kind(key->kind) ? ": expected a list of names or numbers" : ": expected a single value"));
    }
    apply(config, *key, *value, where);
  }
}

CommandLine load_config(int argc, char** argv) {
  CommandLine result;
  Config& config = result.config;
  config.socket_path = default_socket_path();
  config.state_dir = default_state_dir();

  CLI::App app{"jitcached: the jitcache daemon, a persistent JIT cache for CUDA", "jitcached"};
  app.set_version_flag("--version", JITCACHE_VERSION);
  app.add_flag("--print-config-reference", result.print_config_reference,
               "Print the Markdown table of configuration keys and exit");
  std::map<std::string, std::string> flag_values;
  std::map<std::string, bool> flag_switches;
  for (const auto& key : config_keys()) {
    const std::string description = std::string(key.description) + " [env " + env_name(key) + "]";
    if (key.kind == ValueKind::boolean) {
      app.add_flag(flag_name(key), flag_switches[std::string(key.name)], description);
    } else {
      app.add_option(flag_name(key), flag_values[std::string(key.name)], description)
          ->type_name(std::string(kind_name(key.kind)));
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with status 0; a usage error prints CLI11's message.
    result.exit_status = app.exit(e) == 0 ? 0 : 2;
    return result;
  }

  // The file named by flag, then by variable, then the default location when it exists.
  const ConfigKey& config_key = *find_config_key("config");
  std::string file = flag_values["config"];
  if (file.empty()) {
    if (const char* v = std::getenv(env_name(config_key).c_str()); v != nullptr && *v != '\0') file = v;
  }
  const bool explicit_file = !file.empty();
  if (!explicit_file && file_exists(default_config_file())) file = default_config_file();
  if (!file.empty()) {
    if (explicit_file && !file_exists(file)) throw ConfigError("config file " + file + " does not exist");
    config.config_file = file;
    apply_config_file_text(config, read_whole_file(file), file);
  }

  for (const auto& key : config_keys()) {
    if (!key.in_file) continue;
    const std::string variable = env_name(key);
    if (const char* v = std::getenv(variable.c_str()); v != nullptr && *v != '\0') apply(config, key, v, variable);
  }

  for (const auto& key : config_keys()) {
    if (!key.in_file) continue;
    const std::string name(key.name);
    if (key.kind == ValueKind::boolean) {
      if (app.count(flag_name(key)) > 0) apply(config, key, flag_switches[name] ? "true" : "false", flag_name(key));
    } else if (app.count(flag_name(key)) > 0) {
      apply(config, key, flag_values[name], flag_name(key));
    }
  }
  return result;
}

}  // namespace jitcache::daemon::config
