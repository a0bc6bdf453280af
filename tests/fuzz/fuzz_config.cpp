// libFuzzer target: the daemon's configuration parser (daemon/config). Input: one selector byte, then
// text. Selector below 0x80: the text is a TOML file, applied as jitcached applies its config file
// (apply_config_file_text, toml++ underneath). Otherwise: the text is one value for the key numbered
// by the selector, as a JITCACHE_* variable or a --flag carries it (ConfigKey::set: sizes, durations,
// counts, booleans, log levels, paths, groups).
//
// Properties checked (abort() on violation, so the fuzzer reports the input):
//   - nothing reads out of bounds, leaks or hits UB (ASan, UBSan, LeakSanitizer);
//   - a bad file throws ConfigError (nothing else) whose message starts with the file's name, and a
//     bad value is invalid_argument with a message;
//   - whatever a source accepted, every key prints as text that its own parser accepts and reads
//     back to the same setting (so --print-config-reference and logged settings mean what they say);
//   - a value means the same in the file as in a variable or flag.
#include <daemon/config/config_loader.hpp>
#include <daemon/config/config_table.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace jitcache::daemon::config;

namespace {

constexpr std::uint8_t k_first_key_selector = 0x80;
const std::string k_source_name = "fuzz.toml";

[[noreturn]] void fail(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz_config: property violated: %s %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

// Every key's printed value goes back through its parser to the same printed value. An empty path is
// skipped: it means "the default", which is printed as empty but cannot be set.
void check_round_trip(const Config& config) {
  for (const ConfigKey& key : config_keys()) {
    const std::string printed = key.get(config);
    if (printed.empty() && key.kind == ValueKind::path) continue;
    Config again = config;
    if (auto result = key.set(again, printed); !result)
      fail("a key's printed value is refused by its parser:", key.name);
    if (key.get(again) != printed) fail("a key's printed value reads back as another value:", key.name);
  }
}

void apply_file(std::string_view text, Config& config) {
  try {
    apply_config_file_text(config, std::string(text), k_source_name);
  } catch (const ConfigError& e) {
    if (std::string_view(e.what()).rfind(k_source_name, 0) != 0) fail("a file error does not name the file:", e.what());
    throw;
  }
}

void fuzz_file(std::string_view text) {
  Config config;
  try {
    apply_file(text, config);
  } catch (const ConfigError&) {
    return;
  }
  check_round_trip(config);
}

// TOML basic string of `value`, when it can be written as one without escapes.
bool toml_string(std::string_view value, std::string& out) {
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7F || c == '"' || c == '\\') return false;
  }
  out = "\"" + std::string(value) + "\"";
  return true;
}

void fuzz_value(const ConfigKey& key, std::string_view value) {
  Config by_variable;
  auto result = key.set(by_variable, value);
  if (!result) {
    if (result.error().code != jitcache::common::ErrorCode::invalid_argument)
      fail("a bad value is not invalid_argument");
    if (result.error().message.empty()) fail("a bad value is refused without a message");
  } else {
    check_round_trip(by_variable);
  }

  std::string quoted;
  if (!key.in_file || !toml_string(value, quoted)) return;
  Config by_file;
  bool file_accepted = true;
  try {
    apply_file(std::string(key.name) + " = " + quoted + "\n", by_file);
  } catch (const ConfigError&) {
    file_accepted = false;
  }
  if (file_accepted != result.ok()) fail("a value is accepted by one source and refused by another:", key.name);
  if (file_accepted && key.get(by_file) != key.get(by_variable)) {
    fail("a value means one thing in the file and another in a variable:", key.name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] < k_first_key_selector) {
    fuzz_file(text);
  } else {
    const auto keys = config_keys();
    fuzz_value(keys[(data[0] - k_first_key_selector) % keys.size()], text);
  }
  return 0;
}
