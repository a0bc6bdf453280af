// The HTTP remote (daemon/remote/http/) against a real nginx with WebDAV PUT and DELETE
// (tests/support/nginx_server.hpp), and against the scripted server where nginx cannot show a
// behaviour (If-None-Match honoured, chunked bodies, counted connections).
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <daemon/remote/http/http_backend.hpp>
#include <daemon/remote/http/http_settings.hpp>

#include <tests/support/nginx_server.hpp>
#include <tests/support/scripted_http_server.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using namespace std::chrono_literals;
using common::ErrorCode;
using daemon::remote::Clock;
using daemon::remote::Deadline;
using daemon::remote::RemoteBackend;
using daemon::remote::RemoteKey;
using daemon::remote::http::HttpSettings;
using testing::HttpBehaviour;
using testing::NginxOptions;
using testing::NginxServer;
using testing::ScriptedHttpServer;

namespace {

Deadline in(std::chrono::milliseconds time) { return Clock::now() + time; }

std::unique_ptr<RemoteBackend> backend_for(const std::string& url,
                                           const std::function<void(HttpSettings&)>& adjust = {}) {
  auto settings = daemon::remote::http::parse_http_url(url);
  REQUIRE(settings.ok());
  if (adjust) adjust(*settings);
  auto backend = daemon::remote::http::make_http_backend(std::move(*settings));
  REQUIRE(backend.ok());
  return std::move(*backend);
}

// Bytes of every value 0..255, so that a backend treating the value as text would show.
std::string binary_value(std::size_t size, unsigned seed) {
  std::string value(size, '\0');
  for (std::size_t i = 0; i < size; ++i) value[i] = static_cast<char>((i * 131 + seed * 7) & 0xff);
  return value;
}

void require_ok(const common::Result<void>& result) {
  if (!result.ok()) FAIL(result.error().message);
}

}  // namespace

TEST_CASE("http remote: put, get, exists and remove round-trip through nginx's WebDAV, creating the folders") {
  NginxServer nginx;
  const auto backend = backend_for(nginx.url("/fleet/jc"));
  CHECK(backend->name() == nginx.url("/fleet/jc"));
  const RemoteKey key{"img", "00ff10ab"};
  const std::string value = binary_value(300 * 1024, 1);

  auto missing = backend->get(key, 1 << 20, in(5s));
  REQUIRE(missing.ok());
  CHECK_FALSE(missing->has_value());
  CHECK(backend->exists(key, in(5s)).value() == false);

  require_ok(backend->put(key, value, 0ms, in(5s)));
  CHECK(testing::read_file(nginx.root() + "/fleet/jc/img/00ff10ab") == value);  // <prefix>/<space>/<id>
  auto found = backend->get(key, 1 << 20, in(5s));
  REQUIRE(found.ok());
  REQUIRE(found->has_value());
  CHECK(**found == value);
  CHECK(backend->exists(key, in(5s)).value() == true);
  CHECK(backend->exists(RemoteKey{"idx", "00ff10ab"}, in(5s)).value() == false);

  require_ok(backend->put(key, "replaced", 0ms, in(5s)));
  CHECK(backend->get(key, 1 << 20, in(5s)).value() == std::optional<std::string>("replaced"));
  require_ok(backend->put(RemoteKey{"probe", "empty"}, "", 0ms, in(5s)));
  CHECK(backend->get(RemoteKey{"probe", "empty"}, 10, in(5s)).value() == std::optional<std::string>(""));

  require_ok(backend->remove(key, in(5s)));
  CHECK_FALSE(std::filesystem::exists(nginx.root() + "/fleet/jc/img/00ff10ab"));
  CHECK_FALSE(backend->get(key, 1 << 20, in(5s)).value().has_value());
  CHECK(backend->exists(key, in(5s)).value() == false);
  require_ok(backend->remove(key, in(5s)));  // removing nothing is success
}

TEST_CASE("http remote: a PUT nginx cannot store (its folder is a file) is an io error naming the 500") {
  NginxServer nginx;
  testing::write_file(nginx.root() + "/jc", "a file where the prefix's folder would be");
  const auto backend = backend_for(nginx.url());
  const auto put = backend->put(RemoteKey{"img", "ab"}, "value", 0ms, in(5s));
  REQUIRE_FALSE(put.ok());
  CHECK(put.error().code == ErrorCode::io);
  CHECK_THAT(put.error().message, Catch::Contains("HTTP 500"));
  require_ok(backend->ping(in(5s)));  // the server is reachable and the credentials are fine
}

TEST_CASE("http remote: a key that could name another path is refused before anything is sent") {
  NginxServer nginx;
  const auto backend = backend_for(nginx.url());
  for (const RemoteKey key : {RemoteKey{"img", ".."}, RemoteKey{"img", "a/b"}, RemoteKey{"../x", "ab"},
                              RemoteKey{"img", ""}, RemoteKey{"img", "a b"}}) {
    const auto result = backend->put(key, "x", 0ms, in(5s));
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == ErrorCode::invalid_argument);
  }
  CHECK(std::filesystem::is_empty(nginx.root()));
}

TEST_CASE("http remote: ping succeeds on a reachable server whether or not the prefix exists yet") {
  NginxServer nginx;
  for (const std::string prefix : {"/jc", ""}) {
    const auto backend = backend_for(nginx.url(prefix));
    require_ok(backend->ping(in(5s)));
    require_ok(backend->put(RemoteKey{"idx", "ab"}, "x", 0ms, in(5s)));
    // The prefix is now a folder, for which nginx answers 301 (and "/" 403): ping does not ask for it.
    require_ok(backend->ping(in(5s)));
  }
}

TEST_CASE("http remote: basic authentication with the right password works, a wrong or missing one is forbidden") {
  NginxOptions options;
  options.user = "builder";
  options.password = "s3cret with space";
  NginxServer nginx(options);
  const RemoteKey key{"idx", "0123"};
  const auto authorised = backend_for(nginx.url(), [](HttpSettings& settings) {
    REQUIRE(daemon::remote::http::set_http_credentials(settings, "builder:s3cret with space\n").ok());
  });
  require_ok(authorised->ping(in(5s)));
  require_ok(authorised->put(key, "record", 0ms, in(5s)));
  CHECK(authorised->get(key, 100, in(5s)).value() == std::optional<std::string>("record"));

  const auto wrong = backend_for(nginx.url(), [](HttpSettings& settings) {
    REQUIRE(daemon::remote::http::set_http_credentials(settings, "builder:guess").ok());
  });
  const auto anonymous = backend_for(nginx.url());
  for (auto* backend : {wrong.get(), anonymous.get()}) {
    const auto ping = backend->ping(in(5s));
    REQUIRE_FALSE(ping.ok());
    CHECK(ping.error().code == ErrorCode::forbidden);
    CHECK(ping.error().message.find("401") != std::string::npos);
    CHECK(backend->get(key, 100, in(5s)).error().code == ErrorCode::forbidden);
    CHECK(backend->exists(key, in(5s)).error().code == ErrorCode::forbidden);
    CHECK(backend->put(key, "forged", 0ms, in(5s)).error().code == ErrorCode::forbidden);
    CHECK(backend->remove(key, in(5s)).error().code == ErrorCode::forbidden);
  }
  CHECK(authorised->get(key, 100, in(5s)).value() == std::optional<std::string>("record"));
}

TEST_CASE("http remote: a read-only location serves reads and refuses writes as forbidden") {
  NginxOptions options;
  options.read_only_location = "/ro/";
  NginxServer nginx(options);
  std::filesystem::create_directories(nginx.root() + "/ro/idx");
  testing::write_file(nginx.root() + "/ro/idx/abcd", "published record");
  const auto reader = backend_for(nginx.url("/ro"));
  require_ok(reader->ping(in(5s)));
  CHECK(reader->get(RemoteKey{"idx", "abcd"}, 100, in(5s)).value() == std::optional<std::string>("published record"));
  const auto put = reader->put(RemoteKey{"idx", "abcd"}, "overwrite", 0ms, in(5s));
  REQUIRE_FALSE(put.ok());
  CHECK(put.error().code == ErrorCode::forbidden);
  CHECK(reader->remove(RemoteKey{"idx", "abcd"}, in(5s)).error().code == ErrorCode::forbidden);
  CHECK(testing::read_file(nginx.root() + "/ro/idx/abcd") == "published record");
}

TEST_CASE("http remote: https with the test CA as ca_file verifies nginx by DNS name (SNI) and by IP address") {
  NginxOptions options;
  options.tls = true;
  NginxServer nginx(options);
  for (const std::string host : {"localhost", "127.0.0.1"}) {
    const auto backend =
        backend_for(nginx.url("/jc", host), [&](HttpSettings& settings) { settings.ca_file = nginx.ca_file(); });
    CHECK(backend->name().rfind("https://", 0) == 0);
    require_ok(backend->ping(in(5s)));
    require_ok(backend->put(RemoteKey{"img", "beef"}, binary_value(70000, 2), 0ms, in(5s)));
    CHECK(backend->get(RemoteKey{"img", "beef"}, 1 << 20, in(5s)).value() ==
          std::optional<std::string>(binary_value(70000, 2)));
  }
}

TEST_CASE("http remote: https without the test CA fails verification against the system's store, never skipping it") {
  NginxOptions options;
  options.tls = true;
  NginxServer nginx(options);
  const auto backend = backend_for(nginx.url("/jc", "localhost"));
  const auto ping = backend->ping(in(5s));
  REQUIRE_FALSE(ping.ok());
  CHECK(ping.error().code == ErrorCode::unavailable);
  CHECK_THAT(ping.error().message, Catch::Contains("certificate verify failed"));
  CHECK_FALSE(backend->put(RemoteKey{"img", "beef"}, "x", 0ms, in(5s)).ok());
  CHECK_FALSE(std::filesystem::exists(nginx.root() + "/jc"));
}

TEST_CASE("http remote: https refuses a certificate made for another name even when its CA is trusted") {
  NginxOptions options;
  options.tls = true;
  options.tls_names = "DNS:cache.example";
  NginxServer nginx(options);
  for (const std::string host : {"localhost", "127.0.0.1"}) {
    const auto backend =
        backend_for(nginx.url("/jc", host), [&](HttpSettings& settings) { settings.ca_file = nginx.ca_file(); });
    const auto ping = backend->ping(in(5s));
    REQUIRE_FALSE(ping.ok());
    CHECK(ping.error().code == ErrorCode::unavailable);
    CHECK_THAT(ping.error().message, Catch::Contains("certificate verify failed"));
  }
}

TEST_CASE("http remote: an unreadable CA file fails when the backend is made, naming the file") {
  auto settings = daemon::remote::http::parse_http_url("https://cache.example/jc");
  REQUIRE(settings.ok());
  testing::TempDir dir;
  settings->ca_file = dir.file("missing.pem");
  auto missing = daemon::remote::http::make_http_backend(*settings);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::invalid_argument);
  CHECK_THAT(missing.error().message, Catch::Contains("missing.pem"));
  testing::write_file(dir.file("empty.pem"), "not a certificate\n");
  settings->ca_file = dir.file("empty.pem");
  CHECK_FALSE(daemon::remote::http::make_http_backend(*settings).ok());
}

TEST_CASE("http remote: put_if_absent without ?lease=if-none-match is unsupported and stores nothing") {
  NginxServer nginx;
  const auto backend = backend_for(nginx.url());
  const auto lease = backend->put_if_absent(RemoteKey{"lease", "ab"}, "holder", 30s, in(5s));
  REQUIRE_FALSE(lease.ok());
  CHECK(lease.error().code == ErrorCode::unsupported);
  CHECK_THAT(lease.error().message, Catch::Contains("lease=if-none-match"));
  CHECK_FALSE(std::filesystem::exists(nginx.root() + "/jc/lease/ab"));
}

// Why nginx is no lease server (docs/remote-layout.md "Leases"): its dav module replaces the
// file whatever If-None-Match says. Should a later nginx honour it, this fails and the page changes.
TEST_CASE(
    "http remote: nginx's dav module ignores If-None-Match on PUT, so a second put_if_absent replaces the value") {
  NginxServer nginx;
  const auto backend = backend_for(nginx.url("/jc") + "?lease=if-none-match");
  CHECK(backend->put_if_absent(RemoteKey{"lease", "ab"}, "first", 30s, in(5s)).value() == true);
  CHECK(backend->put_if_absent(RemoteKey{"lease", "ab"}, "second", 30s, in(5s)).value() == true);
  CHECK(testing::read_file(nginx.root() + "/jc/lease/ab") == "second");
}

TEST_CASE(
    "http remote: put_if_absent with leases on a server honouring If-None-Match stores once, then answers false") {
  ScriptedHttpServer server(HttpBehaviour::store);
  const auto backend = backend_for(server.url("/jc") + "?lease=if-none-match");
  const RemoteKey key{"lease", "0a0b"};
  CHECK(backend->put_if_absent(key, "builder-1", 30s, in(5s)).value() == true);
  CHECK(backend->put_if_absent(key, "builder-2", 30s, in(5s)).value() == false);
  CHECK(server.stored("/jc/lease/0a0b") == std::optional<std::string>("builder-1"));
  require_ok(backend->remove(key, in(5s)));
  CHECK(backend->put_if_absent(key, "builder-2", 30s, in(5s)).value() == true);
  CHECK(server.stored("/jc/lease/0a0b") == std::optional<std::string>("builder-2"));
}

TEST_CASE("http remote: a 10 MB object with max_bytes 1 MB is too_large at once, and the next call works") {
  NginxServer nginx;
  std::filesystem::create_directories(nginx.root() + "/jc/img");
  const std::string big = binary_value(10 * 1024 * 1024, 3);
  testing::write_file(nginx.root() + "/jc/img/b16", big);
  const auto backend = backend_for(nginx.url());
  const auto started = Clock::now();
  const auto result = backend->get(RemoteKey{"img", "b16"}, 1024 * 1024, in(5s));
  const auto took = Clock::now() - started;
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().code == ErrorCode::too_large);
  CHECK_THAT(result.error().message, Catch::Contains("10485760"));
  CHECK(took < 500ms);
  CHECK(backend->get(RemoteKey{"img", "b16"}, 10 * 1024 * 1024, in(5s)).value() == std::optional<std::string>(big));
  CHECK(backend->get(RemoteKey{"img", "b16"}, 10 * 1024 * 1024 - 1, in(5s)).error().code == ErrorCode::too_large);
}

TEST_CASE("http remote: a chunked body is counted against max_bytes as it arrives") {
  ScriptedHttpServer server(HttpBehaviour::store_chunked);
  const std::string value = binary_value(2 * 1024 * 1024 + 5, 4);
  server.store("/jc/img/c0", value);
  const auto backend = backend_for(server.url());
  CHECK(backend->get(RemoteKey{"img", "c0"}, value.size(), in(5s)).value() == std::optional<std::string>(value));
  const auto over = backend->get(RemoteKey{"img", "c0"}, 1024 * 1024, in(5s));
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().code == ErrorCode::too_large);
  CHECK(backend->get(RemoteKey{"img", "c0"}, value.size(), in(5s)).value() == std::optional<std::string>(value));
}

TEST_CASE("http remote: sequential calls reuse one kept-alive connection") {
  ScriptedHttpServer server(HttpBehaviour::store);
  const auto backend = backend_for(server.url());
  for (int i = 0; i < 50; ++i) {
    require_ok(backend->put(RemoteKey{"idx", "0" + std::to_string(i)}, "v", 0ms, in(5s)));
    REQUIRE(backend->exists(RemoteKey{"idx", "0" + std::to_string(i)}, in(5s)).value());
  }
  CHECK(server.requests_served() == 100);
  CHECK(server.connections_accepted() == 1);
}

namespace {

// Each of `threads` threads puts, reads back, checks and removes its own keys `rounds` times.
void hammer(RemoteBackend& backend, int threads, int rounds) {
  std::vector<std::thread> workers;
  std::vector<std::string> failures(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto& failure = failures[static_cast<std::size_t>(t)];
      for (int round = 0; round < rounds && failure.empty(); ++round) {
        const std::string id = "t" + std::to_string(t) + "r" + std::to_string(round % 5);
        const std::string value =
            binary_value(static_cast<std::size_t>(1000 + 37 * t + round), static_cast<unsigned>(t));
        const RemoteKey key{"img", id};
        if (auto put = backend.put(key, value, 0ms, in(10s)); !put.ok()) failure = "put: " + put.error().message;
        auto got = backend.get(key, 1 << 20, in(10s));
        if (failure.empty() && (!got.ok() || got->value_or("") != value)) {
          failure = "get: " + (got.ok() ? std::string("another value") : got.error().message);
        }
        auto there = backend.exists(key, in(10s));
        if (failure.empty() && (!there.ok() || !*there)) failure = "exists";
        if (auto removed = backend.remove(key, in(10s)); failure.empty() && !removed.ok()) {
          failure = "remove: " + removed.error().message;
        }
      }
    });
  }
  for (auto& worker : workers) worker.join();
  for (int t = 0; t < threads; ++t) {
    INFO("thread " << t);
    CHECK(failures[static_cast<std::size_t>(t)] == "");
  }
}

}  // namespace

TEST_CASE("http remote: 16 threads share a pool of 4 connections to nginx, every value intact") {
  NginxServer nginx;
  const auto backend = backend_for(nginx.url(), [](HttpSettings& settings) { settings.max_connections = 4; });
  hammer(*backend, 16, 60);
}

TEST_CASE("http remote: 16 threads never hold more than the pool's 4 connections at once") {
  ScriptedHttpServer server(HttpBehaviour::store);
  const auto backend = backend_for(server.url(), [](HttpSettings& settings) { settings.max_connections = 4; });
  hammer(*backend, 16, 60);
  CHECK(server.requests_served() == 16 * 60 * 4);
  CHECK(server.most_connections_open() <= 4);
  CHECK(server.connections_accepted() <= 4);
}
