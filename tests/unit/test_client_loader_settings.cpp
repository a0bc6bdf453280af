// Where the client finds the daemon (client/src/loader/client_settings): jitcache_configure, then
// JITCACHE_SOCKET, then the config file's `socket`, then the default; JITCACHE_DISABLE turns caching
// off; a broken config file is ignored with a note, never fatal.
#include <client/src/loader/client_settings.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>

#include <tests/support/temp_dir.hpp>

namespace ld = jitcache::client::loader;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;

namespace {
// Sets the variables for one test and restores a clean environment after it.
struct CleanEnvironment {
  CleanEnvironment() { clear(); }
  ~CleanEnvironment() { clear(); }
  static void clear() {
    for (const char* name : {"JITCACHE_SOCKET", "JITCACHE_CONFIG", "JITCACHE_DISABLE", "JITCACHE_QUIET",
                             "JITCACHE_PUBLISHED", "JITCACHE_DAEMON_USER"}) {
      ::unsetenv(name);
    }
  }
};
}  // namespace

TEST_CASE("settings: JITCACHE_SOCKET beats the config file, and jitcache_configure beats both") {
  CleanEnvironment env;
  TempDir dir;
  write_file(dir.file("jitcached.toml"), "socket = \"/from/config.sock\"\n");
  ::setenv("JITCACHE_CONFIG", dir.file("jitcached.toml").c_str(), 1);
  CHECK(ld::resolve_settings(nullptr).socket_path == "/from/config.sock");
  CHECK(ld::resolve_settings(nullptr).socket_source == dir.file("jitcached.toml"));

  ::setenv("JITCACHE_SOCKET", "/from/env.sock", 1);
  CHECK(ld::resolve_settings(nullptr).socket_path == "/from/env.sock");

  jitcache_config config{};
  config.struct_size = sizeof(config);
  config.socket_path = "/from/api.sock";
  config.request_timeout_ms = 250;
  auto settings = ld::resolve_settings(&config);
  CHECK(settings.socket_path == "/from/api.sock");
  CHECK(settings.socket_source == "jitcache_configure");
  CHECK(settings.request_timeout.count() == 250);
  CHECK(settings.connect_timeout == ld::k_default_connect_timeout);
}

TEST_CASE("settings: a config file that does not parse is noted and ignored") {
  CleanEnvironment env;
  TempDir dir;
  write_file(dir.file("broken.toml"), "socket = [unterminated\n");
  ::setenv("JITCACHE_CONFIG", dir.file("broken.toml").c_str(), 1);
  auto settings = ld::resolve_settings(nullptr);
  CHECK(settings.socket_source == "default");
  CHECK_FALSE(settings.socket_path.empty());
  CHECK_THAT(settings.notes, Catch::Contains("broken.toml"));
}

TEST_CASE("settings: JITCACHE_DISABLE=1 and config.disable turn caching off, 0 does not") {
  CleanEnvironment env;
  ::setenv("JITCACHE_DISABLE", "1", 1);
  auto disabled = ld::resolve_settings(nullptr);
  CHECK(disabled.disabled);
  CHECK(disabled.disabled_by == "JITCACHE_DISABLE=1");
  ::setenv("JITCACHE_DISABLE", "0", 1);
  CHECK_FALSE(ld::resolve_settings(nullptr).disabled);

  jitcache_config config{};
  config.struct_size = sizeof(config);
  config.disable = 1;
  config.quiet = 1;
  auto by_api = ld::resolve_settings(&config);
  CHECK(by_api.disabled);
  CHECK(by_api.quiet);
}

TEST_CASE("settings: published copies are read unless JITCACHE_PUBLISHED says no") {
  CleanEnvironment env;
  CHECK(ld::resolve_settings(nullptr).published);
  for (const char* off : {"0", "false", "no"}) {
    ::setenv("JITCACHE_PUBLISHED", off, 1);
    CHECK_FALSE(ld::resolve_settings(nullptr).published);
  }
  ::setenv("JITCACHE_PUBLISHED", "1", 1);
  CHECK(ld::resolve_settings(nullptr).published);
}

// Regression (fuzz_config): toml++ 3.3.0 has undefined behaviour on some non-ASCII text outside
// comments and quoted values (common/toml_non_ascii.hpp); every CUDA process reads this file.
TEST_CASE("settings: a config file with non-ASCII text outside comments and quoted values is noted and ignored") {
  CleanEnvironment env;
  TempDir dir;
  write_file(dir.file("jitcached.toml"), "socket = \"/from/config.sock\"\n \xEF\xBB\xBB B\n");
  ::setenv("JITCACHE_CONFIG", dir.file("jitcached.toml").c_str(), 1);
  auto settings = ld::resolve_settings(nullptr);
  CHECK(settings.socket_source == "default");
  CHECK_THAT(settings.notes, Catch::Contains("jitcached.toml") && Catch::Contains("non-ASCII"));
}

TEST_CASE("settings: non-ASCII text in the config file's comments and quoted socket path is read") {
  CleanEnvironment env;
  TempDir dir;
  write_file(dir.file("jitcached.toml"),
             "# \xD1\x81\xD0\xBE\xD0\xBA\xD0\xB5\xD1\x82\nsocket = \"/run/\xC3\xA9quipe.sock\"\n");
  ::setenv("JITCACHE_CONFIG", dir.file("jitcached.toml").c_str(), 1);
  CHECK(ld::resolve_settings(nullptr).socket_path == "/run/\xC3\xA9quipe.sock");
}

TEST_CASE("settings: JITCACHE_DAEMON_USER names the daemon users the library trusts besides the caller and root") {
  CleanEnvironment env;
  CHECK(ld::resolve_settings(nullptr).daemon_trust.trusts(::geteuid()));
  CHECK(ld::resolve_settings(nullptr).daemon_trust.trusts(0));
  CHECK_FALSE(ld::resolve_settings(nullptr).daemon_trust.trusts(10001));
  // The default, jitcache, is named whether or not such a user exists here.
  CHECK_THAT(ld::resolve_settings(nullptr).daemon_trust.describe(), Catch::Contains("jitcache"));
  ::setenv("JITCACHE_DAEMON_USER", "10001", 1);
  auto settings = ld::resolve_settings(nullptr);
  CHECK(settings.daemon_trust.trusts(10001));
  CHECK_THAT(settings.daemon_trust.describe(), !Catch::Contains("jitcache"));
}
