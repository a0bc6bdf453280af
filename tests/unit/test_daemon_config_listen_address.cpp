// metrics_listen values (daemon/config/listen_address.hpp): loopback host:port forms are accepted,
// anything else is refused with a message that says why.
#include <catch2/catch.hpp>

#include <string>

#include <daemon/config/config.hpp>
#include <daemon/config/config_table.hpp>
#include <daemon/config/listen_address.hpp>

using namespace jitcache::daemon;

TEST_CASE("metrics listen address: loopback IPv4, IPv6 and localhost are accepted, port 0 included") {
  auto v4 = config::parse_listen_address("127.0.0.1:9464");
  REQUIRE(v4.ok());
  CHECK(v4->host == "127.0.0.1");
  CHECK(v4->port == 9464);
  auto other_loopback = config::parse_listen_address("127.3.2.1:0");
  REQUIRE(other_loopback.ok());
  CHECK(other_loopback->port == 0);
  auto v6 = config::parse_listen_address("[::1]:9464");
  REQUIRE(v6.ok());
  CHECK(v6->host == "::1");
  auto named = config::parse_listen_address("localhost:1");
  REQUIRE(named.ok());
  CHECK(named->host == "127.0.0.1");
}

TEST_CASE("metrics listen address: a non-loopback address is refused and the message says loopback") {
  for (const char* text : {"0.0.0.0:9464", "10.1.2.3:9464", "[::]:9464", "[2001:db8::1]:9464", "192.168.0.1:80"}) {
    INFO(text);
    auto parsed = config::parse_listen_address(text);
    REQUIRE_FALSE(parsed.ok());
    CHECK_THAT(parsed.error().message, Catch::Contains("not a loopback address"));
  }
}

TEST_CASE("metrics listen address: malformed values are refused with what is wrong") {
  CHECK_THAT(config::parse_listen_address("127.0.0.1").error().message, Catch::Contains("host:port"));
  CHECK_THAT(config::parse_listen_address("127.0.0.1:").error().message, Catch::Contains("host:port"));
  CHECK_THAT(config::parse_listen_address("127.0.0.1:65536").error().message, Catch::Contains("0..65535"));
  CHECK_THAT(config::parse_listen_address("127.0.0.1:http").error().message, Catch::Contains("0..65535"));
  CHECK_THAT(config::parse_listen_address("example.org:9464").error().message, Catch::Contains("not an IP address"));
  CHECK_THAT(config::parse_listen_address("[::1:9464").error().message, Catch::Contains("unbalanced"));
}

TEST_CASE("metrics listen address: the config key is off by default and refuses non-loopback when set") {
  CHECK(config::Config{}.metrics_listen.empty());
  const config::ConfigKey* key = config::find_config_key("metrics_listen");
  REQUIRE(key != nullptr);
  config::Config c;
  REQUIRE(key->set(c, "127.0.0.1:9464").ok());
  CHECK(c.metrics_listen == "127.0.0.1:9464");
  auto refused = key->set(c, "0.0.0.0:9464");
  REQUIRE_FALSE(refused.ok());
  CHECK(c.metrics_listen == "127.0.0.1:9464");
  REQUIRE(key->set(c, "").ok());
  CHECK(c.metrics_listen.empty());
}

TEST_CASE("metrics listen address: unix: names a Unix socket by its absolute path") {
  auto parsed = config::parse_listen_address("unix:/run/jitcache/metrics.sock");
  REQUIRE(parsed.ok());
  CHECK(parsed->is_unix());
  CHECK(parsed->unix_path == "/run/jitcache/metrics.sock");
  CHECK(parsed->host.empty());
  CHECK_FALSE(config::parse_listen_address("127.0.0.1:9464")->is_unix());

  for (const char* text : {"unix:", "unix:metrics.sock", "unix:run/metrics.sock", "unix:/run/jitcache/"}) {
    INFO(text);
    auto refused = config::parse_listen_address(text);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("absolute file path"));
  }
  auto too_long = config::parse_listen_address("unix:/" + std::string(200, 'a'));
  REQUIRE_FALSE(too_long.ok());
  CHECK_THAT(too_long.error().message, Catch::Contains("longer than 107 bytes"));
  config::Config c;
  REQUIRE(config::find_config_key("metrics_listen")->set(c, "unix:/tmp/m.sock").ok());
  CHECK(c.metrics_listen == "unix:/tmp/m.sock");
}

TEST_CASE("metrics per uid: off by default, a boolean key") {
  CHECK_FALSE(config::Config{}.metrics_per_uid);
  const config::ConfigKey* key = config::find_config_key("metrics_per_uid");
  REQUIRE(key != nullptr);
  config::Config c;
  REQUIRE(key->set(c, "true").ok());
  CHECK(c.metrics_per_uid);
  CHECK_FALSE(key->set(c, "sometimes").ok());
}
