// The Redis backend (daemon/remote/redis/redis_backend.hpp) against a real standalone
// redis-server: every operation, the key names an operator sees, TTLs, max_bytes, a database other
// than 0, a password, ACL users (a read-only one refused a write), a connection the server closed
// replaced without a failed call, 16 threads sharing a pool of 4 connections, and the leases'
// compare-and-change scripts (a renewal or release never touches another host's lease).
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <daemon/remote/redis/redis_backend.hpp>
#include <daemon/remote/redis/redis_settings.hpp>

#include <tests/support/redis_server.hpp>
#include <tests/support/test_skip.hpp>

using namespace std::chrono_literals;
using jitcache::common::ErrorCode;
using jitcache::daemon::remote::Clock;
using jitcache::daemon::remote::LeaseChange;
using jitcache::daemon::remote::make_redis_backend;
using jitcache::daemon::remote::parse_redis_url;
using jitcache::daemon::remote::RedisBackend;
using jitcache::daemon::remote::RedisSettings;
using jitcache::daemon::remote::RemoteKey;
using jitcache::testing::RedisServer;
using jitcache::testing::RedisServerOptions;

namespace {

auto within(std::chrono::milliseconds time) { return Clock::now() + time; }

std::unique_ptr<RedisBackend> backend_for(const std::string& url, const std::string& password = {}) {
  auto settings = parse_redis_url(url);
  REQUIRE(settings);
  settings->password = password;
  return make_redis_backend(std::move(*settings));
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

bool ipv6_loopback_available() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  const bool bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return bound;
}

// A get as `user` from database 1.
jitcache::common::Result<std::optional<std::string>> reader_in_db(const RedisServer& server, const std::string& user,
                                                                  const std::string& password) {
  return backend_for("redis://" + user + "@" + server.address() + "/1", password)
      ->get(RemoteKey{"idx", "ab"}, 100, within(2s));
}

const std::string k_id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

}  // namespace

TEST_CASE("redis backend: put, get, exists and remove on a standalone server, under the documented key names") {
  RedisServer server;
  auto backend = backend_for(server.url());
  CHECK(backend->name() == "redis://" + server.address() + "/0");
  const RemoteKey key{"idx", k_id};

  auto missing = backend->get(key, 1 << 20, within(2s));
  REQUIRE(missing);
  CHECK_FALSE(missing->has_value());
  CHECK(backend->exists(key, within(2s)).value() == false);

  const std::string value("binary\0value\r\n$3\r\n", 18);
  REQUIRE(backend->put(key, value, 0ms, within(2s)));
  CHECK(backend->exists(key, within(2s)).value() == true);
  auto found = backend->get(key, 1 << 20, within(2s));
  REQUIRE(found);
  REQUIRE(found->has_value());
  CHECK(**found == value);
  CHECK(trimmed(server.cli({"STRLEN", "jitcache:idx:{" + k_id + "}"})) == "18");
  CHECK(trimmed(server.cli({"PTTL", "jitcache:idx:{" + k_id + "}"})) == "-1");  // ttl 0: no expiry

  REQUIRE(backend->put(key, "second", 0ms, within(2s)));
  CHECK(backend->get(key, 100, within(2s)).value().value() == "second");

  REQUIRE(backend->remove(key, within(2s)));
  CHECK(backend->exists(key, within(2s)).value() == false);
  REQUIRE(backend->remove(key, within(2s)));  // removing nothing is success
  CHECK(backend->get(key, 100, within(2s)).value() == std::nullopt);

  REQUIRE(backend->put(RemoteKey{"img", k_id}, "", 0ms, within(2s)));
  CHECK(backend->get(RemoteKey{"img", k_id}, 0, within(2s)).value().value().empty());
  REQUIRE(backend->ping(within(2s)));
}

TEST_CASE("redis backend: a value over max_bytes is too_large, one of max_bytes is read") {
  RedisServer server;
  auto backend = backend_for(server.url());
  const RemoteKey key{"img", k_id};
  const std::string value(3 * 1024 * 1024 + 7, 'v');
  REQUIRE(backend->put(key, value, 0ms, within(5s)));
  auto refused = backend->get(key, value.size() - 1, within(5s));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::too_large);
  CHECK(refused.error().message.find(std::to_string(value.size())) != std::string::npos);
  auto read = backend->get(key, value.size(), within(5s));
  REQUIRE(read);
  CHECK(read->value() == value);
  // The refused connection was closed, not left with the value unread for the next call.
  CHECK(backend->get(RemoteKey{"idx", k_id}, 10, within(2s)).value() == std::nullopt);
  CHECK(backend->counters().connections_discarded == 1);
}

TEST_CASE("redis backend: put with a ttl expires, and put_if_absent is a lease that expires") {
  RedisServer server;
  auto backend = backend_for(server.url());
  const RemoteKey lease{"lease", k_id};

  CHECK(backend->put_if_absent(lease, "holder-a", 300ms, within(2s)).value() == true);
  CHECK(backend->put_if_absent(lease, "holder-b", 300ms, within(2s)).value() == false);
  CHECK(backend->get(lease, 100, within(2s)).value().value() == "holder-a");
  const auto pttl = std::stoll(trimmed(server.cli({"PTTL", "jitcache:lease:{" + k_id + "}"})));
  CHECK(pttl > 0);
  CHECK(pttl <= 300);
  std::this_thread::sleep_for(450ms);
  CHECK(backend->exists(lease, within(2s)).value() == false);
  CHECK(backend->put_if_absent(lease, "holder-b", 300ms, within(2s)).value() == true);
  CHECK(backend->get(lease, 100, within(2s)).value().value() == "holder-b");

  const RemoteKey idx{"idx", k_id};
  REQUIRE(backend->put(idx, "v", 200ms, within(2s)));
  CHECK(backend->exists(idx, within(2s)).value() == true);
  std::this_thread::sleep_for(350ms);
  CHECK(backend->exists(idx, within(2s)).value() == false);

  // ttl 0: a lease without expiry.
  CHECK(backend->put_if_absent(RemoteKey{"lease", "ab"}, "x", 0ms, within(2s)).value() == true);
  CHECK(trimmed(server.cli({"PTTL", "jitcache:lease:{ab}"})) == "-1");
  CHECK(backend->put(idx, "v", -1ms, within(2s)).error().code == ErrorCode::invalid_argument);
}

TEST_CASE("redis backend: renew_lease extends our own lease, and leaves one another host took as it is") {
  RedisServer server;
  auto backend = backend_for(server.url());
  const RemoteKey lease{"lease", k_id};
  const std::string name = "jitcache:lease:{" + k_id + "}";
  auto pttl = [&] { return std::stoll(trimmed(server.cli({"PTTL", name}))); };

  REQUIRE(backend->put_if_absent(lease, "host-a 1 100", 300ms, within(2s)).value());
  CHECK(backend->renew_lease(lease, "host-a 1 100", "host-a 1 200", 5000ms, within(2s)).value() == LeaseChange::done);
  CHECK(backend->get(lease, 100, within(2s)).value().value() == "host-a 1 200");
  CHECK(pttl() > 300);
  CHECK(pttl() <= 5000);
  std::this_thread::sleep_for(450ms);  // past the ttl it was taken with
  CHECK(backend->get(lease, 100, within(2s)).value().value() == "host-a 1 200");
  // The value before the renewal is no longer the lease: nothing is changed.
  CHECK(backend->renew_lease(lease, "host-a 1 100", "host-a 1 300", 5000ms, within(2s)).value() == LeaseChange::lost);
  CHECK(backend->get(lease, 100, within(2s)).value().value() == "host-a 1 200");

  // Ours expires (a stalled compile) and host b takes the key: our renewal does not touch its lease.
  REQUIRE(backend->renew_lease(lease, "host-a 1 200", "host-a 1 250", 200ms, within(2s)).value() == LeaseChange::done);
  std::this_thread::sleep_for(350ms);
  REQUIRE(backend->put_if_absent(lease, "host-b 2 900", 60000ms, within(2s)).value());
  CHECK(backend->renew_lease(lease, "host-a 1 250", "host-a 1 400", 5000ms, within(2s)).value() == LeaseChange::lost);
  CHECK(backend->get(lease, 100, within(2s)).value().value() == "host-b 2 900");
  CHECK(pttl() > 5000);  // still b's ttl, not the 5 s our renewal asked for

  // ttl 0: a lease without expiry, as put; a renewal never makes a lease where there is none.
  const RemoteKey other{"lease", "ab"};
  REQUIRE(backend->put_if_absent(other, "c", 1000ms, within(2s)).value());
  CHECK(backend->renew_lease(other, "c", "c2", 0ms, within(2s)).value() == LeaseChange::done);
  CHECK(trimmed(server.cli({"PTTL", "jitcache:lease:{ab}"})) == "-1");
  REQUIRE(backend->remove(other, within(2s)));
  CHECK(backend->renew_lease(other, "c2", "c3", 1000ms, within(2s)).value() == LeaseChange::lost);
  CHECK(backend->exists(other, within(2s)).value() == false);
  CHECK(backend->renew_lease(other, "c", "c", -1ms, within(2s)).error().code == ErrorCode::invalid_argument);
}

TEST_CASE("redis backend: release_lease removes our own lease only, never another host's") {
  RedisServer server;
  auto backend = backend_for(server.url());
  const RemoteKey lease{"lease", k_id};
  REQUIRE(backend->put_if_absent(lease, "host-b 2 900", 60000ms, within(2s)).value());
  CHECK(backend->release_lease(lease, "host-a 1 250", within(2s)).value() == LeaseChange::lost);
  CHECK(backend->get(lease, 100, within(2s)).value().value() == "host-b 2 900");
  CHECK(backend->release_lease(lease, "host-b 2 900", within(2s)).value() == LeaseChange::done);
  CHECK(backend->exists(lease, within(2s)).value() == false);
  CHECK(backend->release_lease(lease, "host-b 2 900", within(2s)).value() == LeaseChange::lost);  // nothing there
  // A value with bytes Lua or RESP could take for something else is compared byte for byte.
  const std::string binary("a\0b\r\n'\"]]", 9);
  REQUIRE(backend->put_if_absent(lease, binary, 60000ms, within(2s)).value());
  CHECK(backend->release_lease(lease, std::string("a\0c\r\n'\"]]", 9), within(2s)).value() == LeaseChange::lost);
  CHECK(backend->release_lease(lease, binary, within(2s)).value() == LeaseChange::done);
}

TEST_CASE("redis backend: a server without EVAL answers the lease scripts unsupported, not a failure") {
  RedisServerOptions options;
  options.extra_config = {"rename-command EVAL \"\""};
  RedisServer server(options);
  auto backend = backend_for(server.url());
  const RemoteKey lease{"lease", k_id};
  REQUIRE(backend->put_if_absent(lease, "host-a 1 100", 60000ms, within(2s)).value());
  auto renewed = backend->renew_lease(lease, "host-a 1 100", "host-a 1 200", 60000ms, within(2s));
  REQUIRE_FALSE(renewed);
  CHECK(renewed.error().code == ErrorCode::unsupported);
  CHECK(backend->release_lease(lease, "host-a 1 100", within(2s)).error().code == ErrorCode::unsupported);
  CHECK(backend->get(lease, 100, within(2s)).value().value() == "host-a 1 100");
}

TEST_CASE("redis backend: the URL's database and key prefix are where values go") {
  RedisServer server;
  auto backend = backend_for(server.url() + "/3?prefix=team-a/");
  REQUIRE(backend->put(RemoteKey{"fk", "beef"}, "in db 3", 0ms, within(2s)));
  CHECK(trimmed(server.cli({"-n", "3", "GET", "team-a/fk:{beef}"})) == "in db 3");
  CHECK(trimmed(server.cli({"-n", "0", "EXISTS", "team-a/fk:{beef}"})) == "0");
  auto no_such_db = backend_for(server.url() + "/99")->put(RemoteKey{"fk", "beef"}, "x", 0ms, within(2s));
  REQUIRE_FALSE(no_such_db);
  CHECK(no_such_db.error().code == ErrorCode::io);
  CHECK(no_such_db.error().message.find("SELECT 99") != std::string::npos);
}

TEST_CASE("redis backend: with requirepass, the right password serves, a wrong or missing one is forbidden") {
  RedisServerOptions options;
  options.password = "s3cret pass";
  RedisServer server(options);
  const RemoteKey key{"idx", k_id};

  auto good = backend_for(server.url(), "s3cret pass");
  REQUIRE(good->put(key, "v", 0ms, within(2s)));
  CHECK(good->get(key, 10, within(2s)).value().value() == "v");
  REQUIRE(good->ping(within(2s)));

  auto wrong = backend_for(server.url(), "wrong");
  auto refused = wrong->get(key, 10, within(2s));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::forbidden);
  CHECK(refused.error().message.find("WRONGPASS") != std::string::npos);
  CHECK(refused.error().message.find("wrong") == std::string::npos);  // the message never quotes a password
  CHECK(wrong->ping(within(2s)).error().code == ErrorCode::forbidden);

  auto none = backend_for(server.url());
  auto no_auth = none->exists(key, within(2s));
  REQUIRE_FALSE(no_auth);
  CHECK(no_auth.error().code == ErrorCode::forbidden);
  CHECK(no_auth.error().message.find("NOAUTH") != std::string::npos);
}

TEST_CASE("redis backend: a password for a server without one is forbidden, not silently ignored") {
  RedisServer server;
  auto backend = backend_for(server.url(), "unneeded");
  auto refused = backend->ping(within(2s));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::forbidden);
}

TEST_CASE(
    "redis backend: ACL users: a builder with the documented commands does everything, a reader is forbidden to write") {
  RedisServerOptions options;
  options.acl_users = {
      "builder on >build-pw ~jitcache:* resetchannels -@all +get +exists +set +del +eval +ping +auth",
      "reader on >read-pw ~jitcache:* resetchannels -@all +get +exists +ping +auth",
      "old-builder on >old-pw ~jitcache:* resetchannels -@all +get +exists +set +del +ping +auth",
      "selector on >select-pw ~jitcache:* resetchannels -@all +get +exists +ping +auth +select",
  };
  RedisServer server(options);
  const RemoteKey key{"idx", k_id};
  const RemoteKey lease{"lease", k_id};

  auto builder = backend_for("redis://builder@" + server.address(), "build-pw");
  CHECK(builder->name() == "redis://builder@" + server.address() + "/0");
  REQUIRE(builder->ping(within(2s)));
  REQUIRE(builder->put(key, "built", 0ms, within(2s)));
  CHECK(builder->put_if_absent(lease, "me", 1000ms, within(2s)).value() == true);
  CHECK(builder->exists(key, within(2s)).value() == true);
  CHECK(builder->get(key, 100, within(2s)).value().value() == "built");
  CHECK(builder->renew_lease(lease, "me", "me again", 1000ms, within(2s)).value() == LeaseChange::done);
  CHECK(builder->release_lease(lease, "me again", within(2s)).value() == LeaseChange::done);
  CHECK(builder->put_if_absent(lease, "me", 1000ms, within(2s)).value() == true);
  REQUIRE(builder->remove(lease, within(2s)));

  // A builder user of an ACL without EVAL: the scripts are forbidden (the tier then renews and
  // releases in two steps, lease_change.hpp), everything else works.
  auto old_builder = backend_for("redis://old-builder@" + server.address(), "old-pw");
  CHECK(old_builder->put_if_absent(lease, "old", 1000ms, within(2s)).value() == true);
  auto refused = old_builder->renew_lease(lease, "old", "old again", 1000ms, within(2s));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::forbidden);
  CHECK(refused.error().message.find("eval") != std::string::npos);
  CHECK(old_builder->release_lease(lease, "old", within(2s)).error().code == ErrorCode::forbidden);
  CHECK(old_builder->get(lease, 100, within(2s)).value().value() == "old");
  REQUIRE(old_builder->remove(lease, within(2s)));

  auto reader = backend_for("redis://reader@" + server.address(), "read-pw");
  REQUIRE(reader->ping(within(2s)));
  CHECK(reader->get(key, 100, within(2s)).value().value() == "built");
  CHECK(reader->exists(key, within(2s)).value() == true);
  auto write = reader->put(key, "overwritten", 0ms, within(2s));
  REQUIRE_FALSE(write);
  CHECK(write.error().code == ErrorCode::forbidden);
  CHECK(write.error().message.find("NOPERM") != std::string::npos);
  CHECK(reader->put_if_absent(lease, "x", 1000ms, within(2s)).error().code == ErrorCode::forbidden);
  CHECK(reader->release_lease(lease, "x", within(2s)).error().code == ErrorCode::forbidden);
  CHECK(reader->remove(key, within(2s)).error().code == ErrorCode::forbidden);
  // A key outside the prefix the ACL grants is refused too.
  auto other = backend_for("redis://reader@" + server.address() + "?prefix=other:", "read-pw");
  CHECK(other->get(key, 100, within(2s)).error().code == ErrorCode::forbidden);
  CHECK(reader->get(key, 100, within(2s)).value().value() == "built");  // the refusal left the pool usable

  // A database other than 0 needs SELECT too.
  auto no_select = reader_in_db(server, "reader", "read-pw");
  CHECK(no_select.error().code == ErrorCode::forbidden);
  CHECK(no_select.error().message.find("SELECT") != std::string::npos);
  CHECK(reader_in_db(server, "selector", "select-pw").value() == std::nullopt);

  auto wrong_user = backend_for("redis://nobody@" + server.address(), "read-pw");
  CHECK(wrong_user->ping(within(2s)).error().code == ErrorCode::forbidden);
}

TEST_CASE("redis backend: connections the server closed while idle are replaced without a failed call") {
  RedisServer server;
  auto backend = backend_for(server.url());
  const RemoteKey key{"idx", k_id};
  REQUIRE(backend->put(key, "v", 0ms, within(2s)));
  server.cli({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  auto after_kill = backend->get(key, 10, within(2s));
  REQUIRE(after_kill);
  CHECK(after_kill->value() == "v");
  CHECK(backend->counters().stale_retries == 1);

  // A restarted server: refused while down, served again after, without a failed call.
  server.kill();
  CHECK(backend->get(key, 10, within(2s)).error().code == ErrorCode::unavailable);
  server.start();
  REQUIRE(backend->put(key, "again", 0ms, within(2s)));
  CHECK(backend->get(key, 10, within(2s)).value().value() == "again");
}

TEST_CASE("redis backend: 16 threads share a pool of 4 connections without a failed call") {
  RedisServer server;
  auto settings = parse_redis_url(server.url());
  REQUIRE(settings);
  settings->max_connections_per_node = 4;
  auto backend = make_redis_backend(std::move(*settings));
  constexpr int k_threads = 16;
  constexpr int k_rounds = 300;
  std::atomic<int> failures{0};
  std::atomic<int> wrong_values{0};
  std::vector<std::thread> threads;
  const auto started = Clock::now();
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < k_rounds; ++i) {
        const std::string id = std::to_string(t) + "-" + std::to_string(i % 20);
        const RemoteKey key{"idx", id};
        const std::string value =
            id + ":" + std::to_string(i) + std::string(static_cast<std::size_t>(i % 7) * 100, 'x');
        if (!backend->put(key, value, 0ms, within(5s))) ++failures;
        auto read = backend->get(key, 1 << 16, within(5s));
        if (!read || !read->has_value()) {
          ++failures;
        } else if (**read != value) {
          ++wrong_values;  // each thread writes only its own keys: it reads what it wrote
        }
        auto present = backend->exists(key, within(5s));
        if (!present || !*present) ++failures;
        auto lease = backend->put_if_absent(RemoteKey{"lease", id}, "x", 50ms, within(5s));
        if (!lease) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  const auto counters = backend->counters();
  WARN("16 threads x " << k_rounds << " x 4 calls in " << elapsed.count() << " ms over " << counters.connections_opened
                       << " connections, " << counters.pool_waits << " pool waits");
  CHECK(failures == 0);
  CHECK(wrong_values == 0);
  CHECK(counters.connections_opened <= 4);
  CHECK(counters.connections_discarded == 0);
  CHECK(counters.pool_waits > 0);
  // The server saw no more than the pool's connections (and redis-cli's own).
  const auto clients = server.cli({"INFO", "clients"});
  CHECK(clients.find("connected_clients:5") != std::string::npos);
}

TEST_CASE("redis backend: a server on the IPv6 loopback is reached through a bracketed URL") {
  if (!ipv6_loopback_available()) {
    JITCACHE_SKIP("no IPv6 loopback on this machine (::1 cannot be bound)");
  }
  RedisServerOptions options;
  options.extra_config = {"bind 127.0.0.1 ::1"};
  RedisServer server(options);
  auto backend = backend_for("redis://[::1]:" + std::to_string(server.port()));
  CHECK(backend->name() == "redis://[::1]:" + std::to_string(server.port()) + "/0");
  REQUIRE(backend->put(RemoteKey{"idx", k_id}, "over v6", 0ms, within(2s)));
  CHECK(trimmed(server.cli({"GET", "jitcache:idx:{" + k_id + "}"})) == "over v6");
}
