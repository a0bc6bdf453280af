#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <daemon/config/config.hpp>
#include <daemon/config/config_loader.hpp>
#include <daemon/config/config_table.hpp>
#include <daemon/config/units.hpp>
#include <daemon/store/eviction_order.hpp>

using namespace jitcache::daemon::config;

namespace {
std::string read_doc(const std::string& relative) {
  std::ifstream in(std::string(JITCACHE_SOURCE_DIR) + "/" + relative);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}
}  // namespace

TEST_CASE("config table: every key has a unique name, flag and environment variable") {
  std::set<std::string> names, flags, envs;
  for (const auto& key : config_keys()) {
    CHECK(names.insert(std::string(key.name)).second);
    CHECK(flags.insert(flag_name(key)).second);
    CHECK(envs.insert(env_name(key)).second);
    CHECK_FALSE(key.description.empty());
  }
  CHECK(flag_name(*find_config_key("state_dir")) == "--state-dir");
  CHECK(env_name(*find_config_key("state_dir")) == "JITCACHE_STATE_DIR");
  CHECK(env_name(*find_config_key("socket")) == "JITCACHE_SOCKET");  // shared with the clients
}

TEST_CASE("config table: docs/configuration.md lists exactly the table (regenerate with --print-config-reference)") {
  CHECK_THAT(read_doc("docs/configuration.md"), Catch::Contains(config_reference_markdown()));
}

TEST_CASE("config table: every key's default survives a round trip through its own parser") {
  const Config defaults;
  for (const auto& key : config_keys()) {
    Config copy = defaults;
    const std::string text = key.get(defaults);
    if (text.empty()) continue;  // config file: no default
    INFO(key.name << " = " << text);
    CHECK(key.set(copy, text));
    CHECK(key.get(copy) == text);
  }
}

TEST_CASE("config file: values are applied and unknown keys are refused with file and line") {
  Config config;
  apply_config_file_text(config, "idle_timeout = \"2s\"\nmax_frame_bytes = \"16MiB\"\nworker_threads = 3\n", "a.toml");
  CHECK(config.idle_timeout == std::chrono::seconds(2));
  CHECK(config.max_frame_bytes == 16u << 20);
  CHECK(config.worker_threads == 3);

  CHECK_THROWS_WITH(apply_config_file_text(config, "\n\nbogus = 1\n", "b.toml"),
                    Catch::Contains("b.toml:3") && Catch::Contains("unknown key \"bogus\""));
  CHECK_THROWS_WITH(apply_config_file_text(config, "worker_threads = 0\n", "c.toml"),
                    Catch::Contains("c.toml:1") && Catch::Contains("worker_threads"));
  CHECK_THROWS_WITH(apply_config_file_text(config, "idle_timeout = [1, 2]\n", "d.toml"),
                    Catch::Contains("d.toml:1") && Catch::Contains("single value"));
  CHECK_THROWS_WITH(apply_config_file_text(config, "config = \"/x\"\n", "e.toml"), Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(apply_config_file_text(config, "idle_timeout = \n", "f.toml"), Catch::Contains("f.toml:1"));
}

TEST_CASE("units: sizes accept IEC and SI suffixes and refuse nonsense") {
  CHECK(*parse_size("4096") == 4096);
  CHECK(*parse_size("64MiB") == 64ull << 20);
  CHECK(*parse_size("64M") == 64ull << 20);
  CHECK(*parse_size("1.5 GiB") == 3ull << 29);
  CHECK(*parse_size("2kb") == 2000);
  CHECK_FALSE(parse_size("12 parsecs"));
  CHECK_FALSE(parse_size("-1"));
  CHECK_FALSE(parse_size(""));
  CHECK(format_size(64ull << 20) == "64MiB");
}

TEST_CASE("config file: max_size takes human units and 0 for unlimited, stale_driver_after takes days") {
  Config config;
  CHECK(config.max_size == 10ull << 30);
  CHECK(config.stale_driver_after == std::chrono::hours(7 * 24));
  apply_config_file_text(config, "max_size = \"2.5GiB\"\nstale_driver_after = \"3d\"\n", "a.toml");
  CHECK(config.max_size == (5ull << 30) / 2);
  CHECK(config.stale_driver_after == std::chrono::hours(72));
  apply_config_file_text(config, "max_size = \"0\"\nstale_driver_after = \"0\"\n", "b.toml");
  CHECK(config.max_size == 0);
  CHECK(config.stale_driver_after == std::chrono::milliseconds(0));
  CHECK_THROWS_WITH(apply_config_file_text(config, "max_size = \"512KiB\"\n", "c.toml"),
                    Catch::Contains("c.toml:1") && Catch::Contains("1MiB"));
}

TEST_CASE("config file: eviction_policy is gdsf by default, takes lru, and refuses any other name with file and line") {
  Config config;
  CHECK(config.eviction_policy == "gdsf");
  CHECK(jitcache::daemon::store::eviction_order_named(config.eviction_policy) ==
        jitcache::daemon::store::EvictionOrder::gdsf);
  apply_config_file_text(config, "eviction_policy = \"lru\"\n", "a.toml");
  CHECK(config.eviction_policy == "lru");
  CHECK(jitcache::daemon::store::eviction_order_named(config.eviction_policy) ==
        jitcache::daemon::store::EvictionOrder::lru);
  for (const char* bad : {"LRU", "fifo", "", "gdsf "}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(apply_config_file_text(config, std::string("eviction_policy = \"") + bad + "\"\n", "b.toml"),
                      Catch::Contains("b.toml:1") && Catch::Contains("is not gdsf or lru"));
    CHECK_FALSE(jitcache::daemon::store::eviction_order_named(bad).has_value());
  }
  CHECK(config.eviction_policy == "lru");  // a refused value changes nothing
}

TEST_CASE("units: durations accept ms, s, m, h, d and a bare number of seconds") {
  CHECK(*parse_duration("2d") == std::chrono::hours(48));
  CHECK(format_duration(std::chrono::hours(7 * 24)) == "7d");
  CHECK(format_duration(std::chrono::hours(25)) == "25h");
  CHECK(*parse_duration("250ms") == std::chrono::milliseconds(250));
  CHECK(*parse_duration("30") == std::chrono::seconds(30));
  CHECK(*parse_duration("5m") == std::chrono::minutes(5));
  CHECK(*parse_duration("1h") == std::chrono::hours(1));
  CHECK_FALSE(parse_duration("soon"));
  CHECK(format_duration(std::chrono::minutes(5)) == "5m");
  CHECK(format_duration(std::chrono::milliseconds(1500)) == "1500ms");
}

TEST_CASE("config file: compression_level is 3 by default, 0 stores raw, and levels above 19 are refused") {
  Config config;
  CHECK(config.compression_level == 3);
  apply_config_file_text(config, "compression_level = 0\n", "a.toml");
  CHECK(config.compression_level == 0);
  apply_config_file_text(config, "compression_level = 19\n", "b.toml");
  CHECK(config.compression_level == 19);
  CHECK_THROWS_WITH(apply_config_file_text(config, "compression_level = 20\n", "c.toml"),
                    Catch::Contains("c.toml:1") && Catch::Contains("0..19"));
  CHECK_THROWS_WITH(apply_config_file_text(config, "compression_level = -1\n", "d.toml"), Catch::Contains("d.toml:1"));
}

TEST_CASE("config file: trusted_users and trusted_groups take a TOML array or comma-separated text") {
  Config config;
  CHECK(config.trusted_users.empty());
  apply_config_file_text(config, "trusted_users = [\"alice\", 1002]\ntrusted_groups = \"builders, 3000\"\n", "a.toml");
  CHECK(config.trusted_users == "alice,1002");
  CHECK(config.trusted_groups == "builders, 3000");
  apply_config_file_text(config, "trusted_users = []\n", "b.toml");
  CHECK(config.trusted_users.empty());
  CHECK_THROWS_WITH(apply_config_file_text(config, "trusted_users = [\"a,b\"]\n", "c.toml"),
                    Catch::Contains("c.toml:1") && Catch::Contains("list of names or numbers"));
  CHECK_THROWS_WITH(apply_config_file_text(config, "trusted_groups = [true]\n", "d.toml"),
                    Catch::Contains("list of names or numbers"));
  // A scalar key still refuses an array.
  CHECK_THROWS_WITH(apply_config_file_text(config, "max_size = [1]\n", "e.toml"),
                    Catch::Contains("expected a single value"));
}

TEST_CASE("config file: the tenant limits have their defaults and their bounds") {
  Config config;
  CHECK(config.max_connections_per_uid == 256);
  CHECK(config.namespace_quota == 1ull << 30);
  CHECK(config.report_quorum == 3);
  CHECK(config.reports_per_minute == 60);
  apply_config_file_text(
      config, "max_connections_per_uid = 8\nnamespace_quota = \"0\"\nreport_quorum = 1\nreports_per_minute = 0\n",
      "a.toml");
  CHECK(config.max_connections_per_uid == 8);
  CHECK(config.namespace_quota == 0);
  CHECK(config.report_quorum == 1);
  CHECK(config.reports_per_minute == 0);
  CHECK_THROWS_WITH(apply_config_file_text(config, "report_quorum = 0\n", "b.toml"), Catch::Contains("1..1000"));
  CHECK_THROWS_WITH(apply_config_file_text(config, "namespace_quota = \"4KiB\"\n", "c.toml"), Catch::Contains("1MiB"));
}

TEST_CASE("config file: the packaged example parses, and every value it sets is the default") {
  Config config;
  apply_config_file_text(config, read_doc("packaging/jitcached.toml"), "packaging/jitcached.toml");
  const Config defaults;
  for (const auto& key : config_keys()) {
    INFO(key.name);
    if (key.in_file) CHECK(key.get(config) == key.get(defaults));
  }
}

// Regression (fuzz_config): toml++ 3.3.0 reaches __builtin_unreachable on some non-ASCII code points
// where it tests for whitespace (toml_non_ascii.hpp); the loader refuses that text before parsing.
TEST_CASE("config file: non-ASCII text outside comments and quoted values is refused with file and line") {
  Config config;
  // U+FEFB at the start of a line: the input the fuzzer found.
  CHECK_THROWS_WITH(apply_config_file_text(config, "worker_threads = 2\n \xEF\xBB\xBB B\n", "a.toml"),
                    Catch::Contains("a.toml:2") && Catch::Contains("non-ASCII"));
  // U+00A7 after a line-ending backslash in a multi-line string (toml++ misclassifies it:
  // common/toml_non_ascii.hpp).
  CHECK_THROWS_WITH(apply_config_file_text(config, "state_dir = \"\"\"\\\n\xC2\xA7\"\"\"\n", "b.toml"),
                    Catch::Contains("b.toml:2") && Catch::Contains("non-ASCII"));
  // In a quoted key, and after a value.
  CHECK_THROWS_WITH(apply_config_file_text(config, "\"cl\xC3\xA9\" = 1\n", "c.toml"), Catch::Contains("non-ASCII"));
  CHECK_THROWS_WITH(apply_config_file_text(config, "worker_threads = 2\xCC\xAA\n", "d.toml"),
                    Catch::Contains("non-ASCII"));
}

TEST_CASE("config file: non-ASCII text in comments and quoted values is read as before") {
  Config config;
  apply_config_file_text(config,
                         "\xEF\xBB\xBF# Gr\xC3\xB6\xC3\x9F"
                         "e und Pfade\n"
                         "state_dir = \"/srv/jos\xC3\xA9/jitcache\"  # \xD0\xBA\xD1\x8D\xD1\x88\n"
                         "socket_group = '\xC3\xA9quipe'\n",
                         "a.toml");
  CHECK(config.state_dir == "/srv/jos\xC3\xA9/jitcache");
  CHECK(config.socket_group == "\xC3\xA9quipe");
}

TEST_CASE("config defaults: under systemd the config file is the one in CONFIGURATION_DIRECTORY") {
  // The packaged service runs as user jitcache with ConfigurationDirectory=jitcache: without this,
  // /etc/jitcache/jitcached.toml was never read (it looked under the service user's HOME).
  const char* before = std::getenv("CONFIGURATION_DIRECTORY");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("CONFIGURATION_DIRECTORY", "/srv/jitcache-conf:/etc/other", 1);  // several: the first is ours
  CHECK(default_config_file() == "/srv/jitcache-conf/jitcached.toml");
  ::unsetenv("CONFIGURATION_DIRECTORY");
  CHECK(default_config_file().find("/srv/jitcache-conf") == std::string::npos);
  if (before != nullptr) ::setenv("CONFIGURATION_DIRECTORY", saved.c_str(), 1);
}
