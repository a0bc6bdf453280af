// An operator's removal sticks (docs/security.md "Bundles"): `jitcache rm` of a shared entry is
// remembered, and bytes that another host carries do not bring the entry back. A bundle import
// skips it; so must a fleet remote. Here a consumer host serves a builder's NVRTC result from a real
// redis-server, root removes it on the consumer, and the next compile there must not be served the
// remote's copy again (the program gets NVRTC's answer compiled on its host, as after any miss).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <proto/digest.hpp>
#include <proto/messages.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/nvrtc_program_run.hpp>
#include <tests/support/redis_server.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/transparent_check.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::eventually;
using jitcache::testing::FleetHost;
using jitcache::testing::FleetKeys;
using jitcache::testing::host_stat;
using jitcache::testing::RedisServer;
using jitcache::testing::start_fleet_host;
using jitcache::testing::nvrtc::compile_args;
using jitcache::testing::nvrtc::run_program;
using jitcache::testing::nvrtc::Sources;
using jitcache::testing::transparent::run_env;
using namespace std::chrono_literals;

TEST_CASE("nvrtc fleet: an entry an operator removed on a consumer is not fetched from the remote again") {
  RedisServer redis;
  const std::string url = redis.url() + "/0";
  FleetKeys keys;
  FleetHost builder = start_fleet_host(url, keys, /*builder=*/true, {"--remote-timeout", "1s"}, "warn");
  FleetHost consumer = start_fleet_host(url, keys, /*builder=*/false, {"--remote-timeout", "1s"}, "warn");
  Sources sources;
  const ChildResult built = run_program(compile_args(sources), run_env(builder.daemon->socket_path(), true));
  REQUIRE(built.status == 0);
  REQUIRE(eventually([&] { return host_stat(builder, "remote0.uploads") == 1; }, 20s));

  const ChildResult served = run_program(compile_args(sources), run_env(consumer.daemon->socket_path(), true));
  REQUIRE(served.status == 0);
  REQUIRE(host_stat(consumer, "remote0.hits") == 1);
  REQUIRE(host_stat(consumer, "entries") == 1);

  // The operator removes it (root: a trusted caller, so the removal is remembered).
  auto client = consumer.daemon->client();
  auto listed = client.list(jitcache::proto::ListRequest{});
  REQUIRE(listed);
  REQUIRE(listed->entries.size() == 1);
  REQUIRE(client.remove(jitcache::proto::to_hex(listed->entries.front().key_id)));
  REQUIRE(host_stat(consumer, "entries") == 0);

  const ChildResult after = run_program(compile_args(sources), run_env(consumer.daemon->socket_path(), true));
  CHECK(after.status == 0);
  CHECK(after.output == built.output);              // NVRTC's own answer
  CHECK(host_stat(consumer, "remote0.hits") == 1);  // the remote's copy was not taken again
  CHECK(host_stat(consumer, "nvrtc_hits") == 1);    // only the first run's
  CHECK(host_stat(consumer, "nvrtc_puts") == 1);    // compiled here and stored by root, as usual
}
