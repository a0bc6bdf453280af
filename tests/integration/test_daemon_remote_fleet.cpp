// The fleet tier with real parts (issue: a kernel compiles once per fleet): several real jitcached
// daemons, each its own host with its own state dir and socket, share a real redis-server on a
// loopback port, and compile with the real jitcache-compile worker (nvJitLink, no GPU).
//   - host B hits what host A compiled, and compiles nothing;
//   - 8 daemons x 4 clients cold-starting one PTX compile it exactly once fleet-wide;
//   - the lease holder killed mid-compile: another host compiles once its lease expires;
//   - a consumer (no signing key) uploads nothing.
#include <catch2/catch.hpp>

#include <atomic>
#include <latch>
#include <thread>

#include <proto/compile_messages.hpp>
#include <proto/content_digest.hpp>
#include <proto/jit_options.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/redis_server.hpp>
#include <tests/support/sample_entries.hpp>

using namespace jitcache;
using namespace jitcache::testing;
using namespace std::chrono_literals;
using client::transport::CompileAnswer;

namespace {

std::string corpus(const std::string& name) { return read_file(std::string(JITCACHE_TEST_DATA_DIR) + "/" + name); }

CompileAnswer compile_on(FleetHost& host, const proto::CompileRequest& request) {
  auto client = host.daemon->client();
  auto answer = client.compile(request, 180s);
  INFO((answer ? std::string() : answer.error().message));
  REQUIRE(answer.ok());
  return std::move(*answer);
}

}  // namespace

TEST_CASE("fleet: host B hits what host A compiled, and compiles nothing") {
  RedisServer redis;
  FleetKeys keys;
  FleetHost a = start_fleet_host(redis.url() + "/0", keys, /*builder=*/true);
  FleetHost b = start_fleet_host(redis.url() + "/0", keys, /*builder=*/false);

  const std::string ptx = corpus("small_kernel.ptx");
  const auto request = fleet_compile_request(ptx);
  const CompileAnswer compiled = compile_on(a, request);
  REQUIRE(compiled.kind == CompileAnswer::Kind::compiled);
  REQUIRE(eventually([&] { return host_stat(a, "remote0.uploads") == 1; }));

  auto client = b.daemon->client();
  const proto::KeyFields key = proto::key_of(request, proto::content_digest(request.ptx));
  auto found = client.lookup(key);
  REQUIRE(found.ok());
  REQUIRE(found->has_value());
  CHECK((*found)->image == compiled.image->image);
  CHECK(host_stat(b, "compiles") == 0);
  CHECK(host_stat(b, "remote0.hits") == 1);
  CHECK(host_stat(b, "remote0.uploads") == 0);
  // Stored on B: the next lookup is local.
  auto again = client.lookup(key);
  REQUIRE(again.ok());
  CHECK(again->has_value());
  CHECK(host_stat(b, "remote0.lookups") == 1);
}

TEST_CASE("fleet: 8 daemons with 4 clients each cold-starting one PTX compile it once fleet-wide") {
  RedisServer redis;
  FleetKeys keys;
  std::vector<FleetHost> hosts;
  for (int i = 0; i < 8; ++i) hosts.push_back(start_fleet_host(redis.url() + "/0", keys, /*builder=*/true));

  const std::string ptx = corpus("mid_kernels.ptx");
  const auto request = fleet_compile_request(ptx);
  std::latch start(32);
  std::atomic<int> images{0};
  std::vector<std::thread> clients;
  for (int h = 0; h < 8; ++h) {
    for (int c = 0; c < 4; ++c) {
      clients.emplace_back([&, h] {
        auto client = hosts[h].daemon->client();
        start.arrive_and_wait();
        auto answer = client.compile(request, 180s);
        if (answer && answer->kind == CompileAnswer::Kind::compiled && answer->image) ++images;
      });
    }
  }
  for (auto& t : clients) t.join();
  CHECK(images == 32);
  std::uint64_t compiles = 0;
  std::uint64_t waited = 0;
  for (auto& host : hosts) {
    compiles += host_stat(host, "compiles");
    waited += host_stat(host, "remote0.leases_waited");
  }
  CHECK(compiles == 1);
  CHECK(waited >= 1);
}

TEST_CASE("fleet: when the lease holder dies mid-compile another host compiles once the lease expires") {
  RedisServer redis;
  FleetKeys keys;
  FleetHost a = start_fleet_host(redis.url() + "/0", keys, true, {"--remote-lease-ttl", "2s"});
  FleetHost b = start_fleet_host(redis.url() + "/0", keys, true, {"--remote-lease-ttl", "2s"});

  const std::string ptx = corpus("cub_kernels.ptx");
  const auto request = fleet_compile_request(ptx);
  std::thread doomed([&] {
    auto client = a.daemon->client();
    (void)client.compile(request, 180s);  // fails when the daemon dies
  });
  REQUIRE(eventually([&] {
    return redis.cli({"--scan", "--pattern", "jitcache:lease:*"}).find("lease") != std::string::npos;
  }));
  std::optional<CompileAnswer> answer;
  std::thread waiter([&] {
    auto client = b.daemon->client();
    auto got = client.compile(request, 180s);
    if (got) answer = std::move(*got);
  });
  REQUIRE(eventually([&] { return host_stat(b, "remote0.leases_waited") == 1; }));
  a.daemon->kill_hard();
  doomed.join();
  waiter.join();
  REQUIRE(answer.has_value());
  CHECK(answer->kind == CompileAnswer::Kind::compiled);
  CHECK(host_stat(b, "compiles") == 1);
  CHECK(host_stat(b, "remote0.lease_waits_expired") == 1);
}

TEST_CASE("fleet: a daemon without a signing key uploads nothing, not even a trusted PUT to the shared namespace") {
  RedisServer redis;
  FleetKeys keys;
  FleetHost consumer = start_fleet_host(redis.url() + "/0", keys, /*builder=*/false);
  const auto image = sample_image(1, 4096);
  auto client = consumer.daemon->client();
  auto put = client.put(sample_put(1, image));
  REQUIRE(put.ok());
  REQUIRE(put->namespace_id == 0);
  std::this_thread::sleep_for(300ms);
  CHECK(redis.cli({"DBSIZE"}).find("0") == 0);
  CHECK(host_stat(consumer, "remote0.uploads") == 0);
}
