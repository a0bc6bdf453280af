// The Redis backend (daemon/remote/redis/redis_backend.hpp) when the server fails: killed
// (unavailable, fast), stopped with SIGSTOP (timeout by the deadline plus a little, also with every
// pooled connection stuck), not Redis at all (corrupt), silent (timeout), closing (io), hostile
// (a value or array announced huge: refused before it is read or allocated; nesting, wrong types,
// extra bytes: corrupt), a fake Cluster node answering TRYAGAIN, CLUSTERDOWN or MOVED for ever, and
// a Cluster master killed or stopped. Never a crash, never a call past its deadline.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <daemon/remote/redis/hash_slot.hpp>
#include <daemon/remote/redis/redis_backend.hpp>
#include <daemon/remote/redis/redis_settings.hpp>

#include <tests/support/garbage_server.hpp>
#include <tests/support/loopback_port.hpp>
#include <tests/support/redis_cluster.hpp>
#include <tests/support/redis_server.hpp>

using namespace std::chrono_literals;
using jitcache::common::ErrorCode;
using jitcache::daemon::remote::Clock;
using jitcache::daemon::remote::key_hash_slot;
using jitcache::daemon::remote::make_redis_backend;
using jitcache::daemon::remote::parse_redis_url;
using jitcache::daemon::remote::RedisBackend;
using jitcache::daemon::remote::RemoteKey;
using jitcache::testing::GarbageServer;
using jitcache::testing::RedisCluster;
using jitcache::testing::RedisServer;

namespace {

// Rationale: "never blocks past the deadline by more than one system call's return": on a loaded
// CI machine a thread may wake late; 200 ms is far beyond a syscall and far below a second.
constexpr auto k_slack = 200ms;

std::unique_ptr<RedisBackend> backend_for(const std::string& url, std::size_t connections = 4,
                                          const std::string& password = {}) {
  auto settings = parse_redis_url(url);
  REQUIRE(settings);
  settings->max_connections_per_node = connections;
  settings->password = password;
  return make_redis_backend(std::move(*settings));
}

std::chrono::milliseconds since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

const RemoteKey k_key{"idx", "00ff"};

template <class Call>
jitcache::common::Error failure_of(Call&& call) {
  auto result = call();
  REQUIRE_FALSE(result);
  return result.error();
}

}  // namespace

TEST_CASE("redis faults: a killed server, or none at all, is unavailable at once, not at the deadline") {
  RedisServer server;
  auto backend = backend_for(server.url());
  REQUIRE(backend->put(k_key, "v", 0ms, Clock::now() + 2s));
  server.kill();
  auto start = Clock::now();
  const auto error = failure_of([&] { return backend->get(k_key, 10, start + 5s); });
  CHECK(error.code == ErrorCode::unavailable);
  CHECK(since(start) < 500ms);
  CHECK(error.message.find(server.address()) != std::string::npos);
  CHECK(backend->ping(Clock::now() + 5s).error().code == ErrorCode::unavailable);

  auto nobody = backend_for("redis://127.0.0.1:" + std::to_string(jitcache::testing::free_loopback_port()));
  start = Clock::now();
  CHECK(nobody->exists(k_key, start + 5s).error().code == ErrorCode::unavailable);
  CHECK(since(start) < 500ms);
}

TEST_CASE(
    "redis faults: a stopped server times out by the deadline, on a pooled or a new connection, and serves again resumed") {
  RedisServer server;
  auto backend = backend_for(server.url());
  REQUIRE(backend->put(k_key, "v", 0ms, Clock::now() + 2s));
  server.pause();
  for (int i = 0; i < 2; ++i) {  // the pooled connection, then a new one (the kernel still accepts)
    const auto start = Clock::now();
    const auto error = failure_of([&] { return backend->get(k_key, 10, start + 300ms); });
    const auto elapsed = since(start);
    CHECK(error.code == ErrorCode::timeout);
    CHECK(elapsed >= 290ms);
    CHECK(elapsed <= 300ms + k_slack);
  }
  // A value larger than the socket buffers: the send itself must stop at the deadline.
  const std::string large(16 * 1024 * 1024, 'x');
  auto start = Clock::now();
  CHECK(failure_of([&] { return backend->put(k_key, large, 0ms, start + 300ms); }).code == ErrorCode::timeout);
  CHECK(since(start) <= 300ms + k_slack);
  start = Clock::now();
  CHECK(backend->ping(start + 300ms).error().code == ErrorCode::timeout);
  CHECK(since(start) <= 300ms + k_slack);
  server.resume();
  CHECK(backend->get(k_key, 10, Clock::now() + 2s).value().value() == "v");
  CHECK(backend->counters().connections_discarded == 4);
}

TEST_CASE(
    "redis faults: with every pooled connection stuck on a stopped server, callers fail by their deadline (the pool's "
    "waiters as this host's own limit, not the server's timeout) and no more sockets open") {
  RedisServer server;
  auto backend = backend_for(server.url(), 2);
  REQUIRE(backend->ping(Clock::now() + 2s));
  server.pause();
  constexpr int k_callers = 6;
  std::atomic<int> timeouts{0};
  std::atomic<int> pool_full{0};  // no_space: the circuit breaker does not count it (circuit_breaker.hpp)
  std::atomic<int> late{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < k_callers; ++i) {
    callers.emplace_back([&] {
      const auto start = Clock::now();
      auto result = backend->get(k_key, 10, start + 400ms);
      if (!result && result.error().code == ErrorCode::timeout) ++timeouts;
      if (!result && result.error().code == ErrorCode::no_space) ++pool_full;
      if (since(start) > 400ms + k_slack) ++late;
    });
  }
  for (auto& caller : callers) caller.join();
  // The two on the pool's connections time out; the others wait for one and fail as no_space (one
  // that gets a freed slot at its deadline's edge times out instead).
  CHECK(timeouts >= 2);
  CHECK(pool_full >= 1);
  CHECK(timeouts + pool_full == k_callers);
  CHECK(late == 0);
  const auto counters = backend->counters();
  CHECK(counters.connections_opened <= 2);
  CHECK(counters.pool_waits >= k_callers - 2);
  server.resume();
  REQUIRE(backend->ping(Clock::now() + 2s));
}

TEST_CASE("redis faults: a server that answers something that is not RESP is corrupt, and its connection is dropped") {
  GarbageServer garbage(GarbageServer::Behaviour::non_resp);
  auto backend = backend_for("redis://" + garbage.address());
  for (int i = 0; i < 2; ++i) {
    const auto error = failure_of([&] { return backend->get(k_key, 1000, Clock::now() + 2s); });
    CHECK(error.code == ErrorCode::corrupt);
    CHECK(error.message.find("protocol") != std::string::npos);
  }
  CHECK(garbage.connections() == 2);  // the first connection was not reused
  CHECK(backend->ping(Clock::now() + 2s).error().code == ErrorCode::corrupt);
  // With a password, the AUTH reply is the garbage.
  auto with_password = backend_for("redis://" + garbage.address(), 4, "pw");
  CHECK(with_password->put(k_key, "v", 0ms, Clock::now() + 2s).error().code == ErrorCode::corrupt);
}

TEST_CASE("redis faults: a server that never answers times out by the deadline, one that closes is io") {
  {
    GarbageServer silent(GarbageServer::Behaviour::silent);
    auto backend = backend_for("redis://" + silent.address());
    auto start = Clock::now();
    CHECK(failure_of([&] { return backend->get(k_key, 10, start + 250ms); }).code == ErrorCode::timeout);
    CHECK(since(start) <= 250ms + k_slack);
    start = Clock::now();
    CHECK(backend->ping(start + 250ms).error().code == ErrorCode::timeout);
    CHECK(since(start) <= 250ms + k_slack);
  }
  {
    GarbageServer closing(GarbageServer::Behaviour::close);
    auto backend = backend_for("redis://" + closing.address());
    const auto error = failure_of([&] { return backend->exists(k_key, Clock::now() + 2s); });
    CHECK(error.code == ErrorCode::io);
    CHECK(error.message.find("closed the connection") != std::string::npos);
  }
}

TEST_CASE("redis faults: a value announced larger than max_bytes is too_large at once, whatever follows") {
  GarbageServer hostile(GarbageServer::Behaviour::scripted, {"$1000000000000\r\n" + std::string(1000, 'x')});
  auto backend = backend_for("redis://" + hostile.address());
  const auto start = Clock::now();
  const auto error = failure_of([&] { return backend->get(k_key, 1 << 20, start + 2s); });
  CHECK(error.code == ErrorCode::too_large);
  CHECK(error.message.find("1000000000000") != std::string::npos);
  CHECK(since(start) < 1s);  // known from the length line: no waiting for the value
}

TEST_CASE("redis faults: hostile or malformed replies are corrupt, never a crash or an unbounded allocation") {
  struct Case {
    std::string name;
    std::string reply;
  };
  const std::vector<Case> cases{
      {"an array of two billion elements", "*2000000000\r\n"},
      {"an array of a negative 32-bit count", "*4294967295\r\n"},
      {"arrays nested 10 deep", std::string("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n")},
      {"an integer for GET", ":1\r\n"},
      {"a status for GET", "+OK\r\n"},
      {"an array for GET", "*1\r\n$1\r\nx\r\n"},
      {"a reply type byte that is none", "!oops\r\n"},
      {"an error line of 100 KiB", "-ERR " + std::string(100 * 1024, 'e')},
      {"a second reply nobody asked for", "$1\r\nx\r\n+OK\r\n"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    GarbageServer hostile(GarbageServer::Behaviour::scripted, {c.reply});
    auto backend = backend_for("redis://" + hostile.address());
    const auto start = Clock::now();
    const auto error = failure_of([&] { return backend->get(k_key, 10, start + 2s); });
    CHECK(error.code == ErrorCode::corrupt);
    CHECK(since(start) < 1s);
  }
  for (const std::string reply : {"+OK\r\n", "$1\r\n1\r\n", ":2\r\n", ":-1\r\n"}) {
    INFO(reply);
    GarbageServer hostile(GarbageServer::Behaviour::scripted, {reply});
    CHECK(backend_for("redis://" + hostile.address())->exists(k_key, Clock::now() + 2s).error().code ==
          ErrorCode::corrupt);
  }
  GarbageServer truncated(GarbageServer::Behaviour::scripted, {"$10\r\nabc"});
  const auto start = Clock::now();
  CHECK(backend_for("redis://" + truncated.address())->get(k_key, 100, start + 250ms).error().code ==
        ErrorCode::timeout);
  CHECK(since(start) <= 250ms + k_slack);
}

TEST_CASE(
    "redis faults: a fake Cluster node: TRYAGAIN is waited out, CLUSTERDOWN and endless MOVED fail by the deadline") {
  const std::string slots_reply = "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:{port}\r\n";
  {
    GarbageServer node(GarbageServer::Behaviour::scripted,
                       {slots_reply, "-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
                        "-TRYAGAIN Multiple keys request during rehashing of slot\r\n", "+OK\r\n"});
    auto backend = backend_for("redis+cluster://" + node.address());
    REQUIRE(backend->put(k_key, "v", 0ms, Clock::now() + 2s));
    CHECK(backend->counters().cluster_busy_retries == 2);
    CHECK(backend->counters().slot_map_refreshes == 1);
  }
  {
    GarbageServer node(GarbageServer::Behaviour::scripted, {slots_reply, "-CLUSTERDOWN The cluster is down\r\n"});
    auto backend = backend_for("redis+cluster://" + node.address());
    const auto start = Clock::now();
    const auto error = failure_of([&] { return backend->put(k_key, "v", 0ms, start + 300ms); });
    CHECK(error.code == ErrorCode::io);
    CHECK(error.message.find("CLUSTERDOWN") != std::string::npos);
    CHECK(since(start) <= 300ms + k_slack);
    CHECK(backend->counters().cluster_busy_retries >= 3);
  }
  {
    GarbageServer node(GarbageServer::Behaviour::scripted, {slots_reply, "-MOVED 1 127.0.0.1:{port}\r\n"});
    auto backend = backend_for("redis+cluster://" + node.address());
    const auto error = failure_of([&] { return backend->get(k_key, 10, Clock::now() + 2s); });
    CHECK(error.code == ErrorCode::io);
    CHECK(error.message.find("more than 5 redirections") != std::string::npos);
  }
  {
    GarbageServer node(GarbageServer::Behaviour::scripted, {"*1\r\n*2\r\n:0\r\n:16383\r\n"});
    auto backend = backend_for("redis+cluster://" + node.address());
    CHECK(backend->get(k_key, 10, Clock::now() + 2s).error().code == ErrorCode::corrupt);
  }
}

TEST_CASE(
    "redis faults: a killed Cluster master fails its slots fast, the other masters still serve, and a stopped one times out") {
  RedisCluster cluster;
  auto backend = backend_for(cluster.url());
  // One id on master 2, one elsewhere.
  std::string on_two, elsewhere;
  const auto owners = cluster.slot_owners();
  for (int i = 0; on_two.empty() || elsewhere.empty(); ++i) {
    const std::string id = "1d" + std::to_string(i);
    (owners.at(static_cast<std::size_t>(key_hash_slot(id))) == 2 ? on_two : elsewhere) = id;
  }
  REQUIRE(backend->put(RemoteKey{"idx", on_two}, "2", 0ms, Clock::now() + 2s));
  REQUIRE(backend->put(RemoteKey{"idx", elsewhere}, "x", 0ms, Clock::now() + 2s));

  cluster.node(2).pause();
  auto start = Clock::now();
  CHECK(backend->get(RemoteKey{"idx", on_two}, 10, start + 300ms).error().code == ErrorCode::timeout);
  CHECK(since(start) <= 300ms + k_slack);
  CHECK(backend->get(RemoteKey{"idx", elsewhere}, 10, Clock::now() + 2s).value().value() == "x");

  cluster.node(2).kill();
  start = Clock::now();
  CHECK(backend->get(RemoteKey{"idx", on_two}, 10, start + 3s).error().code == ErrorCode::unavailable);
  CHECK(since(start) < 500ms);
  CHECK(backend->get(RemoteKey{"idx", elsewhere}, 10, Clock::now() + 2s).value().value() == "x");
  CHECK(backend->ping(Clock::now() + 2s).error().code == ErrorCode::unavailable);
}
