// The HTTP remote's URL and password file (daemon/remote/http/http_settings.hpp).
#include <catch2/catch.hpp>

#include <string>

#include <daemon/remote/http/http_settings.hpp>

using namespace jitcache;
using daemon::remote::http::display_url;
using daemon::remote::http::HttpSettings;
using daemon::remote::http::parse_http_url;
using daemon::remote::http::set_http_credentials;

namespace {

std::string refusal(const std::string& url) {
  const auto parsed = parse_http_url(url);
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().code == common::ErrorCode::invalid_argument);
  return parsed.error().message;
}

}  // namespace

TEST_CASE("http url: scheme, host, port and prefix are taken apart, with the scheme's default port") {
  const auto plain = parse_http_url("http://cache.example/jitcache/v1");
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->tls);
  CHECK(plain->host == "cache.example");
  CHECK(plain->port == 80);
  CHECK(plain->prefix == "/jitcache/v1");
  CHECK_FALSE(plain->leases);

  const auto secure = parse_http_url("HTTPS://10.0.0.5:8443/jc/");
  REQUIRE(secure.ok());
  CHECK(secure->tls);
  CHECK(secure->host == "10.0.0.5");
  CHECK(secure->port == 8443);
  CHECK(secure->prefix == "/jc");  // the trailing '/' is dropped: keys are <prefix>/<space>/<id>
}

TEST_CASE("http url: the prefix may be empty, with or without a slash") {
  for (const char* url : {"http://cache", "http://cache/", "https://cache:443/"}) {
    const auto parsed = parse_http_url(url);
    REQUIRE(parsed.ok());
    CHECK(parsed->prefix.empty());
  }
  CHECK(parse_http_url("https://cache")->port == 443);
}

TEST_CASE("http url: an IPv6 address is written in brackets, with or without a port") {
  const auto with_port = parse_http_url("http://[fd00::5]:8080/jc");
  REQUIRE(with_port.ok());
  CHECK(with_port->host == "fd00::5");
  CHECK(with_port->port == 8080);
  const auto without = parse_http_url("https://[::1]/jc");
  REQUIRE(without.ok());
  CHECK(without->host == "::1");
  CHECK(without->port == 443);
  CHECK(display_url(*with_port) == "http://[fd00::5]:8080/jc");

  refusal("http://[fd00::5/jc");
  refusal("http://[not-an-address]/jc");
  refusal("http://[::1]x/jc");
}

TEST_CASE("http url: ?lease=if-none-match turns leases on, and no other query is taken") {
  const auto parsed = parse_http_url("https://cache/jc?lease=if-none-match");
  REQUIRE(parsed.ok());
  CHECK(parsed->leases);
  CHECK(parsed->prefix == "/jc");
  CHECK(display_url(*parsed) == "https://cache/jc?lease=if-none-match");
  CHECK(refusal("https://cache/jc?lease=yes").find("lease=if-none-match") != std::string::npos);
  refusal("https://cache/jc?timeout=5");
}

TEST_CASE("http url: credentials in the URL are refused, pointing at remote_password_file") {
  const std::string message = refusal("https://builder:secret@cache/jc");
  CHECK(message.find("remote_password_file") != std::string::npos);
  CHECK(message.find("secret") != std::string::npos);  // it names the URL the user wrote, to find it
  refusal("http://builder@cache/jc");
}

TEST_CASE("http url: other schemes, missing hosts, bad ports and bad paths are refused with the reason") {
  CHECK(refusal("redis://cache:6379/0").find("neither http nor https") != std::string::npos);
  refusal("cache/jc");
  refusal("http:///jc");
  refusal("http://:8080/jc");
  CHECK(refusal("http://cache:0/jc").find("1 to 65535") != std::string::npos);
  refusal("http://cache:65536/jc");
  refusal("http://cache:80x/jc");
  refusal("http://cache:/jc");
  refusal("http://ca che/jc");
  refusal("http://cache/jc#part");
  CHECK(refusal("http://cache/jc/../etc").find("\"..\"") != std::string::npos);
  refusal("http://cache/./jc");
  refusal("http://cache//jc");
  refusal("http://cache/j c");
  refusal("http://cache/jc%2");
  CHECK(parse_http_url("http://cache/j%20c/v_1~x").ok());
}

TEST_CASE("http url: the display form has no default port and no credentials") {
  auto parsed = parse_http_url("https://cache:443/jc");
  REQUIRE(parsed.ok());
  REQUIRE(set_http_credentials(*parsed, "builder:secret\n").ok());
  CHECK(display_url(*parsed) == "https://cache/jc");
  CHECK(display_url(*parse_http_url("http://cache:8080")) == "http://cache:8080");
}

TEST_CASE("http password file: user:password is basic authentication, the password may hold ':'") {
  HttpSettings settings;
  REQUIRE(set_http_credentials(settings, "builder:pa:ss word\n").ok());
  CHECK(settings.user == "builder");
  CHECK(settings.password == "pa:ss word");
  CHECK(settings.bearer_token.empty());
}

TEST_CASE("http password file: a line without ':' is a bearer token") {
  HttpSettings settings;
  settings.user = "old";
  REQUIRE(set_http_credentials(settings, "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJjaSJ9.c2ln\r\n").ok());
  CHECK(settings.bearer_token == "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJjaSJ9.c2ln");
  CHECK(settings.user.empty());
}

TEST_CASE("http password file: empty parts and line breaks inside are refused") {
  for (const char* content : {"", "\n", ":secret", "builder:", "builder:sec\nret", "tok\ten"}) {
    HttpSettings settings;
    const auto result = set_http_credentials(settings, content);
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == common::ErrorCode::invalid_argument);
    CHECK(result.error().message.find("password file") != std::string::npos);
  }
}
