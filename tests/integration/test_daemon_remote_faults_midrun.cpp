// A remote that fails mid-run costs a COMPILE nothing but remote_timeout (issue: a kernel compiles
// once per fleet, "Faults"): a builder daemon first compiles and uploads through a healthy remote,
// then the remote is paused (SIGSTOP: connections accepted, nothing answered), killed (refused), or
// replaced on its port by a listener answering garbage, and COMPILEs of new kernels (the real
// jitcache-compile worker: nvJitLink, no GPU) and LOOKUPs still succeed within the remote's timeout
// plus the local path, the failures are counted, and the daemon stays up. For a real Redis, for a
// listener that speaks no Redis taking over a Redis's port, and for a real nginx (HTTP remote).
// test_daemon_remote_faults.cpp has the LOOKUP-only bounds and the circuit breaker's cycle.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include <proto/compile_messages.hpp>
#include <proto/content_digest.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/fleet_checks.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/garbage_server.hpp>
#include <tests/support/nginx_server.hpp>
#include <tests/support/redis_server.hpp>
#include <tests/support/sample_entries.hpp>

using namespace jitcache;
using namespace jitcache::testing;
using namespace std::chrono_literals;
using client::transport::CompileAnswer;

namespace {

constexpr int k_remote_timeout_ms = 100;
// Rationale for the slack: a miss is the deadline plus scheduling on a busy 2-core CI machine (as in
// test_daemon_remote_faults.cpp). A COMPILE may wait out two remote calls (its lookup and its fleet
// lease) and then compiles as it did while the remote was healthy, give or take seconds on a loaded
// machine; what the bounds rule out is waiting for a background call (10 s) or another host's lease
// (the compile wall time).
constexpr double k_miss_slack_ms = 250;
constexpr double k_compile_slack_ms = 3000;

// small_kernel.ptx with a comment of its own: another content digest, so another key, each compiled.
std::string kernel_variant(int n) {
  return read_file(std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx") + "\n// variant " + std::to_string(n) +
         "\n";
}

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

struct TimedCompile {
  CompileAnswer answer;
  double ms = 0;
};

// One COMPILE of `ptx` (kept alive by the caller), which must succeed with a compiled image.
TimedCompile compile_on(FleetHost& host, const std::string& ptx) {
  auto client = host.daemon->client();
  const auto start = std::chrono::steady_clock::now();
  auto answer = client.compile(fleet_compile_request(ptx), 120s);
  const double ms = elapsed_ms(start);
  INFO((answer ? std::string() : answer.error().message));
  REQUIRE(answer.ok());
  INFO("COMPILE answered " << client::transport::compile_answer_name(answer->kind) << ": " << answer->message);
  REQUIRE(answer->kind == CompileAnswer::Kind::compiled);
  REQUIRE(answer->image.has_value());
  CHECK_FALSE(answer->from_store);
  return {std::move(*answer), ms};
}

// The entry `compiled` of `ptx` is served from this host's own store, remote or no remote.
void served_locally(FleetHost& host, const std::string& ptx, const CompileAnswer& compiled) {
  const auto request = fleet_compile_request(ptx);
  auto client = host.daemon->client();
  auto found = client.lookup(proto::key_of(request, proto::content_digest(request.ptx)));
  REQUIRE(found.ok());
  REQUIRE(found->has_value());
  const proto::Bytes served = (*found)->bytes();
  const proto::Bytes image = compiled.image->bytes();
  CHECK((served.size() == image.size() && std::equal(served.begin(), served.end(), image.begin())));
}

// Failed remote calls of `kinds` (STATS remote0.errors.<kind>) on `host`.
std::uint64_t remote_errors(FleetHost& host, std::initializer_list<const char*> kinds) {
  std::uint64_t sum = 0;
  for (const char* kind : kinds) sum += host_stat(host, std::string("remote0.errors.") + kind);
  return sum;
}

std::uint64_t all_remote_errors(FleetHost& host) {
  return remote_errors(host, {"timeout", "unavailable", "forbidden", "garbage", "server", "too_large", "unsupported"});
}

// A builder on `remote` compiles and uploads while it is healthy (that compile's time is the
// baseline), then `fault` breaks the remote; two COMPILEs of new kernels and LOOKUPs of keys nobody
// has still succeed in bounded time, the failure is counted under one of `kinds`, and what was
// compiled is served locally.
void compiles_through(const std::string& remote, const std::function<void()>& fault,
                      std::initializer_list<const char*> kinds) {
  FleetKeys keys;
  FleetHost host = start_fleet_host(remote, keys, /*builder=*/true,
                                    {"--remote-timeout", std::to_string(k_remote_timeout_ms) + "ms"});
  const std::string before = kernel_variant(1);
  const std::string during = kernel_variant(2);
  const std::string later = kernel_variant(3);
  const TimedCompile healthy = compile_on(host, before);
  REQUIRE(eventually([&] { return host_stat(host, "remote0.uploads") == 1; }));
  // (An HTTP remote has answered `unsupported` to the lease already: nginx takes no conditional PUT.)
  REQUIRE(remote_errors(host, kinds) == 0);

  fault();
  // The first COMPILE after the fault meets it with the circuit breaker still closed: its lookup and
  // its lease each go to the broken remote.
  const TimedCompile first = compile_on(host, during);
  INFO("healthy compile " << healthy.ms << " ms, with the remote broken " << first.ms << " ms");
  CHECK(first.ms < 2 * k_remote_timeout_ms + healthy.ms + k_compile_slack_ms);
  CHECK(remote_errors(host, kinds) >= 1);
  // And later ones, whatever the breaker says by now.
  const TimedCompile second = compile_on(host, later);
  CHECK(second.ms < 2 * k_remote_timeout_ms + healthy.ms + k_compile_slack_ms);
  CHECK(slowest_miss_ms(host, 5000, 5) < k_remote_timeout_ms + k_miss_slack_ms);
  served_locally(host, before, healthy.answer);
  served_locally(host, during, first.answer);
  CHECK(host_stat(host, "compiles") == 3);
  CHECK(host_stat(host, "remote0.hits") == 0);
  CHECK(host.daemon->running());
}

}  // namespace

TEST_CASE("remote faults mid-run: a builder's COMPILE with its Redis paused (SIGSTOP) succeeds within remote_timeout") {
  RedisServer redis;
  compiles_through(redis.url() + "/0", [&] { redis.pause(); }, {"timeout"});
}

TEST_CASE("remote faults mid-run: a builder's COMPILE with its Redis killed succeeds at local speed") {
  RedisServer redis;
  // A pooled connection to the killed server fails as the server's (io) or as refused on the next
  // connect (unavailable), depending on when the daemon notices.
  compiles_through(redis.url() + "/0", [&] { redis.kill(); }, {"unavailable", "server", "garbage"});
}

TEST_CASE("remote faults mid-run: a COMPILE with its HTTP remote (nginx) paused (SIGSTOP) succeeds") {
  NginxServer nginx;
  compiles_through(nginx.url(), [&] { nginx.pause(); }, {"timeout"});
}

TEST_CASE("remote faults mid-run: a COMPILE with its HTTP remote (nginx) killed succeeds") {
  NginxServer nginx;
  // A kept-alive connection to the killed server ends as a failed exchange (io) or a timeout, a new
  // one is refused (unavailable).
  compiles_through(nginx.url(), [&] { nginx.kill(); }, {"unavailable", "server", "timeout", "garbage"});
}

TEST_CASE(
    "remote faults mid-run: Redis replaced on its port by a listener answering garbage: hits made before stay, "
    "LOOKUPs and COMPILEs go on, errors are counted") {
  for (const auto behaviour : {GarbageServer::Behaviour::non_resp, GarbageServer::Behaviour::silent}) {
    INFO("garbage behaviour " << static_cast<int>(behaviour));
    RedisServer redis;
    FleetKeys keys;
    const std::string url = redis.url() + "/0";
    const std::vector<std::string> timeout{"--remote-timeout", std::to_string(k_remote_timeout_ms) + "ms"};
    FleetHost builder = start_fleet_host(url, keys, /*builder=*/true, timeout);
    FleetHost consumer = start_fleet_host(url, keys, /*builder=*/false, timeout);

    // Healthy: the builder compiles and uploads, the consumer is served it from Redis.
    const std::string shared = kernel_variant(1);
    const TimedCompile healthy = compile_on(builder, shared);
    REQUIRE(eventually([&] { return host_stat(builder, "remote0.uploads") == 1; }));
    {
      const auto request = fleet_compile_request(shared);
      auto client = consumer.daemon->client();
      auto found = client.lookup(proto::key_of(request, proto::content_digest(request.ptx)));
      REQUIRE(found.ok());
      REQUIRE(found->has_value());
    }
    REQUIRE(host_stat(consumer, "remote0.hits") == 1);
    REQUIRE(host_stat(consumer, "compiles") == 0);

    // Mid-run, the server on Redis's port stops speaking Redis.
    const std::uint16_t port = redis.port();
    redis.kill();
    GarbageServer garbage(behaviour, {}, port);

    const std::string on_builder = kernel_variant(2);
    const std::string on_consumer = kernel_variant(3);
    const TimedCompile built = compile_on(builder, on_builder);
    CHECK(built.ms < 2 * k_remote_timeout_ms + healthy.ms + k_compile_slack_ms);
    const TimedCompile consumed = compile_on(consumer, on_consumer);
    CHECK(consumed.ms < 2 * k_remote_timeout_ms + healthy.ms + k_compile_slack_ms);
    CHECK(slowest_miss_ms(consumer, 6000, 5) < k_remote_timeout_ms + k_miss_slack_ms);
    CHECK(slowest_miss_ms(builder, 7000, 5) < k_remote_timeout_ms + k_miss_slack_ms);
    served_locally(consumer, shared, healthy.answer);  // what the remote served before is still here
    served_locally(builder, on_builder, built.answer);
    served_locally(consumer, on_consumer, consumed.answer);

    CHECK(garbage.connections() >= 1);  // the daemons did reach the impostor, not only a closed port
    CHECK(all_remote_errors(builder) >= 1);
    CHECK(all_remote_errors(consumer) >= 1);
    CHECK(host_stat(consumer, "remote0.hits") == 1);
    CHECK(host_stat(builder, "compiles") == 2);
    CHECK(host_stat(consumer, "compiles") == 1);
    CHECK(builder.daemon->running());
    CHECK(consumer.daemon->running());
  }
}
