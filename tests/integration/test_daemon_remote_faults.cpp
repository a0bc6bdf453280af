// A dead remote costs nothing (the fleet tier's promise): with the remote killed, paused (SIGSTOP)
// or answering garbage mid-run, every request still succeeds — a miss within remote_timeout plus
// the local path, and at local speed once the remote's circuit breaker opens — and the daemon
// stays up. Real daemon, real redis-server, a real listener that speaks no Redis.
#include <catch2/catch.hpp>

#include <thread>

#include <tests/support/fleet_checks.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/garbage_server.hpp>
#include <tests/support/redis_server.hpp>
#include <tests/support/sample_entries.hpp>

using namespace jitcache;
using namespace jitcache::testing;
using namespace std::chrono_literals;

namespace {

// A stored entry is still served (local hits never touch the remote).
void local_hit_still_served(FleetHost& host) {
  auto client = host.daemon->client();
  const auto image = sample_image(7, 4096);
  REQUIRE(client.put(sample_put(7, image)).ok());
  auto found = client.lookup(sample_key(7));
  REQUIRE(found.ok());
  CHECK(found->has_value());
}

}  // namespace

TEST_CASE("remote faults: a paused remote costs a miss at most remote_timeout, and nothing once its breaker opens") {
  RedisServer redis;
  FleetKeys keys;
  FleetHost host = start_fleet_host(redis.url() + "/0", keys, true, {"--remote-timeout", "100ms"});
  CHECK(slowest_miss_ms(host, 1000, 3) < 100);
  redis.pause();
  // Rationale for the slack: the bound is the deadline plus scheduling on a busy 2-core CI machine.
  CHECK(slowest_miss_ms(host, 2000, 3) < 100 + 250);
  CHECK(host_stat(host, "remote0.errors.timeout") >= 3);
  CHECK(host_stat(host, "remote0.breaker_state") == 1);
  CHECK(slowest_miss_ms(host, 3000, 20) < 50);
  CHECK(host_stat(host, "remote0.skipped") >= 19);
  local_hit_still_served(host);
  redis.resume();
  // The breaker probes again after its interval, and the remote is used again.
  const auto lookups = host_stat(host, "remote0.lookups");
  std::this_thread::sleep_for(700ms);
  slowest_miss_ms(host, 4000, 3);
  CHECK(host_stat(host, "remote0.lookups") > lookups);
  CHECK(host_stat(host, "remote0.breaker_state") == 0);
}

TEST_CASE("remote faults: a killed remote fails fast, and requests go on") {
  RedisServer redis;
  FleetKeys keys;
  FleetHost host = start_fleet_host(redis.url() + "/0", keys, true, {"--remote-timeout", "100ms"});
  redis.kill();
  CHECK(slowest_miss_ms(host, 1000, 10) < 100 + 250);
  CHECK(host_stat(host, "remote0.errors.unavailable") >= 1);
  local_hit_still_served(host);
  CHECK(host.daemon->running());
}

TEST_CASE("remote faults: a remote answering garbage is an error of that remote, never a crash") {
  for (auto behaviour :
       {GarbageServer::Behaviour::non_resp, GarbageServer::Behaviour::close, GarbageServer::Behaviour::silent}) {
    GarbageServer garbage(behaviour);
    FleetKeys keys;
    FleetHost host = start_fleet_host("redis://" + garbage.address() + "/0", keys, true, {"--remote-timeout", "100ms"});
    CHECK(slowest_miss_ms(host, 1000, 5) < 100 + 250);
    CHECK(host_stat(host, "remote0.hits") == 0);
    CHECK(host_stat(host, "remote0.errors.garbage") + host_stat(host, "remote0.errors.timeout") +
              host_stat(host, "remote0.errors.unavailable") + host_stat(host, "remote0.errors.server") >=
          1);
    local_hit_still_served(host);
    CHECK(host.daemon->running());
  }
}

TEST_CASE("remote faults: a hostile reply claiming a huge value is refused without reading it") {
  // A bulk string claiming 4 GiB: the record read is bounded, so this is too_large or garbage.
  GarbageServer hostile(GarbageServer::Behaviour::scripted, {"$4294967296\r\n"});
  FleetKeys keys;
  FleetHost host = start_fleet_host("redis://" + hostile.address() + "/0", keys, true, {"--remote-timeout", "100ms"});
  CHECK(slowest_miss_ms(host, 1000, 3) < 100 + 250);
  CHECK(host.daemon->running());
}
