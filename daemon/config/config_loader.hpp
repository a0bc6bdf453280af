// Builds the Config from defaults, the TOML file, JITCACHE_* variables and flags (in that order of
// precedence, lowest first). Runs once in main(); "cannot start" problems are thrown as ConfigError
// with a message that names the source (file:line, variable or flag); --help, --version and usage
// errors are printed here and reported through CommandLine::exit_status. Thread safety: start-up only.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include <daemon/config/config.hpp>

namespace jitcache::daemon::config {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CommandLine {
  Config config;
  bool print_config_reference = false;
  // Set when the command line asked to exit now (--help, --version, a usage error): the status.
  std::optional<int> exit_status;
};

CommandLine load_config(int argc, char** argv);

// The file step alone, for tests: applies the TOML text (named `source_name` in messages) on top of
// `config`. Unknown keys, wrong value types and bad values throw ConfigError "file:line: ...".
void apply_config_file_text(Config& config, const std::string& text, const std::string& source_name);

}  // namespace jitcache::daemon::config
