// The Redis remote's URL (daemon/remote/redis/redis_settings.hpp): the standalone and Cluster
// forms, IPv6 in brackets, the key prefix, and what is refused with a message that says why (a
// password in the URL above all); and the name a URL is shown under, without a password.
#include <catch2/catch.hpp>

#include <string>

#include <daemon/remote/redis/redis_settings.hpp>

using jitcache::common::ErrorCode;
using jitcache::daemon::remote::parse_redis_url;
using jitcache::daemon::remote::redis_url_name;
using jitcache::daemon::remote::RedisNodeAddress;
using jitcache::daemon::remote::RedisSettings;

namespace {

RedisSettings parsed(const std::string& url) {
  auto settings = parse_redis_url(url);
  INFO(url << ": " << (settings ? "" : settings.error().message));
  REQUIRE(settings);
  return *settings;
}

std::string refusal(const std::string& url, ErrorCode code = ErrorCode::invalid_argument) {
  auto settings = parse_redis_url(url);
  INFO(url);
  REQUIRE_FALSE(settings);
  CHECK(settings.error().code == code);
  return settings.error().message;
}

}  // namespace

TEST_CASE("redis url: a standalone URL gives host, port, user, db and the default prefix") {
  const auto settings = parsed("redis://builder@10.0.0.5:6380/3");
  CHECK(settings.mode == RedisSettings::Mode::standalone);
  REQUIRE(settings.nodes.size() == 1);
  CHECK(settings.nodes[0] == RedisNodeAddress{"10.0.0.5", 6380});
  CHECK(settings.user == "builder");
  CHECK(settings.password.empty());
  CHECK(settings.db == 3);
  CHECK(settings.key_prefix == "jitcache:");
  CHECK(settings.max_connections_per_node == 16);

  const auto plain = parsed("redis://cache.example.com");
  CHECK(plain.nodes[0] == RedisNodeAddress{"cache.example.com", 6379});
  CHECK(plain.user.empty());
  CHECK(plain.db == 0);
  CHECK(parsed("redis://cache:7000/").db == 0);
}

TEST_CASE("redis url: a cluster URL gives its seeds and no db") {
  const auto settings = parsed("redis+cluster://reader@10.0.0.5:7000,10.0.0.6,[fd00::7]:7002?prefix=ci:");
  CHECK(settings.mode == RedisSettings::Mode::cluster);
  REQUIRE(settings.nodes.size() == 3);
  CHECK(settings.nodes[0] == RedisNodeAddress{"10.0.0.5", 7000});
  CHECK(settings.nodes[1] == RedisNodeAddress{"10.0.0.6", 6379});
  CHECK(settings.nodes[2] == RedisNodeAddress{"fd00::7", 7002});
  CHECK(settings.user == "reader");
  CHECK(settings.db == 0);
  CHECK(settings.key_prefix == "ci:");
  CHECK(refusal("redis+cluster://a:7000,b:7001/0").find("only database 0") != std::string::npos);
}

TEST_CASE("redis url: IPv6 literals are written in brackets") {
  CHECK(parsed("redis://[::1]:6379").nodes[0] == RedisNodeAddress{"::1", 6379});
  CHECK(parsed("redis://[2001:db8::2]").nodes[0] == RedisNodeAddress{"2001:db8::2", 6379});
  CHECK(refusal("redis://::1:6379").find("brackets") != std::string::npos);
  CHECK(refusal("redis://[::1:6379").find("not closed") != std::string::npos);
  CHECK(refusal("redis://[not-v6]:6379").find("not an IPv6 address") != std::string::npos);
  CHECK(refusal("redis://[::1]6379").find(":port") != std::string::npos);
}

TEST_CASE("redis url: a password in the URL is refused and the message names remote_password_file") {
  for (const std::string url :
       {"redis://builder:secret@10.0.0.5:6379", "redis://:secret@10.0.0.5:6379", "redis+cluster://u:p@a:7000,b:7001"}) {
    const auto message = refusal(url);
    CHECK(message.find("remote_password_file") != std::string::npos);
    CHECK(message.find("password in the URL") != std::string::npos);
  }
}

TEST_CASE("redis url: the key prefix is 1 to 64 printable characters without spaces or braces") {
  CHECK(parsed("redis://h?prefix=team-a/jit:").key_prefix == "team-a/jit:");
  CHECK(parsed("redis://h:1?prefix=" + std::string(64, 'p')).key_prefix == std::string(64, 'p'));
  CHECK(refusal("redis://h?prefix=" + std::string(65, 'p')).find("1..64") != std::string::npos);
  CHECK(refusal("redis://h?prefix=").find("1..64") != std::string::npos);
  CHECK(refusal("redis://h?prefix=a b").find("without spaces") != std::string::npos);
  CHECK(refusal("redis://h?prefix=x{y}").find("braces") != std::string::npos);
  CHECK(refusal("redis://h?prefix=a\x01").find("printable") != std::string::npos);
  CHECK(refusal("redis://h?prefix=a&prefix=b").find("twice") != std::string::npos);
  CHECK(refusal("redis://h?timeout=5").find("unknown parameter \"timeout\"") != std::string::npos);
  CHECK(refusal("redis://h?prefix").find("needs a value") != std::string::npos);
}

TEST_CASE("redis url: malformed URLs are refused saying what is wrong") {
  CHECK(refusal("10.0.0.5:6379").find("redis://host:port") != std::string::npos);
  CHECK(refusal("http://cache:80").find("scheme") != std::string::npos);
  CHECK(refusal("rediss://cache:6380", ErrorCode::unsupported).find("TLS") != std::string::npos);
  CHECK(refusal("redis://").find("no host") != std::string::npos);
  CHECK(refusal("redis://cache:0").find("1..65535") != std::string::npos);
  CHECK(refusal("redis://cache:65536").find("1..65535") != std::string::npos);
  CHECK(refusal("redis://cache:port").find("1..65535") != std::string::npos);
  CHECK(refusal("redis://cache:").find("empty port") != std::string::npos);
  CHECK(refusal("redis://cache/x").find("not a number") != std::string::npos);
  CHECK(refusal("redis://cache/-1").find("not a number") != std::string::npos);
  CHECK(refusal("redis://a:1,b:2").find("redis+cluster://") != std::string::npos);
  CHECK(refusal("redis://bad host:1").find("not a host name") != std::string::npos);
  CHECK(refusal("redis://us er@h").find("user") != std::string::npos);
  CHECK(refusal("redis://@h").find("user") != std::string::npos);
  CHECK(refusal("redis://h#frag").find("fragment") != std::string::npos);
  CHECK(refusal("redis://u%40x@h").find("percent") != std::string::npos);
  CHECK(refusal("redis+cluster://a:1,,b:2").find("no host") != std::string::npos);
}

TEST_CASE("redis url: the name of a remote is its URL without the password, in one canonical form") {
  auto settings = parsed("redis://builder@10.0.0.5:6379/0");
  settings.password = "secret";
  CHECK(redis_url_name(settings) == "redis://builder@10.0.0.5:6379/0");
  CHECK(redis_url_name(parsed("redis://cache")) == "redis://cache:6379/0");
  CHECK(redis_url_name(parsed("redis://[::1]:7/2?prefix=x:")) == "redis://[::1]:7/2?prefix=x:");
  CHECK(redis_url_name(parsed("redis+cluster://a:7000,[fd00::1]:7001")) == "redis+cluster://a:7000,[fd00::1]:7001");
  // The name parses back to the same settings.
  const auto again = parsed(redis_url_name(parsed("redis+cluster://u@a:7000,b?prefix=p:")));
  CHECK(again.nodes == parsed("redis+cluster://u@a:7000,b?prefix=p:").nodes);
  CHECK(again.user == "u");
  CHECK(again.key_prefix == "p:");
}
