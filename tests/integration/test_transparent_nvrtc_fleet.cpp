// NVRTC results in a fleet (docs/operations.md "A fleet", docs/remote-layout.md): the program (g)
// (tests/programs/nvrtc_compile.c) compiles under libjitcache-preload.so with the toolkit's real
// NVRTC against a builder daemon, as root (a trusted uid, whose PUT is shared and so uploaded, signed
// with the builder's key, to a real redis-server); a consumer daemon that trusts the builder's key
// serves it to the same program on its host as a hit, with NVRTC's outputs, lowered names and log
// byte for byte; a record altered in Redis is refused (bad_signature), and so is the result on a
// host that does not trust the builder's key (unknown_signer): there the program gets NVRTC's own
// answer, compiled on that host.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

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
using jitcache::testing::TempDir;
using jitcache::testing::nvrtc::compile_args;
using jitcache::testing::nvrtc::run_program;
using jitcache::testing::nvrtc::Sources;
using jitcache::testing::transparent::run_env;
using namespace std::chrono_literals;

namespace {

// The Redis keys of one space ("jitcache:idx:{...}"), as redis-cli lists them.
std::vector<std::string> redis_keys(const RedisServer& redis, const std::string& space) {
  std::vector<std::string> keys;
  const std::string listed = redis.cli({"--raw", "KEYS", "jitcache:" + space + ":*"});
  std::size_t start = 0;
  for (std::size_t end = listed.find('\n'); end != std::string::npos; end = listed.find('\n', start)) {
    if (end > start) keys.push_back(listed.substr(start, end - start));
    start = end + 1;
  }
  return keys;
}

// Changes the last byte of a value (an index record's signature ends it, docs/remote-layout.md
// "Index record"), to whichever of 'A' and 'B' it is not.
void alter_last_byte(const RedisServer& redis, const std::string& key) {
  const std::string length = redis.cli({"--raw", "STRLEN", key});
  const long last = std::stol(length) - 1;
  REQUIRE(last > 0);
  const std::string byte = redis.cli({"--raw", "GETRANGE", key, std::to_string(last), std::to_string(last)});
  redis.cli({"SETRANGE", key, std::to_string(last), byte.starts_with("A") ? "B" : "A"});
}

// A host of the test's fleet: remote lookups may take up to 1 s (the shared CI machine).
FleetHost fleet_host(const std::string& url, const FleetKeys& keys, bool builder) {
  return start_fleet_host(url, keys, builder, {"--remote-timeout", "1s"}, "warn");
}

// The program compiled on `builder` under the preload library, and its result uploaded.
ChildResult compile_and_upload(FleetHost& builder, const Sources& sources) {
  ChildResult built = run_program(compile_args(sources), run_env(builder.daemon->socket_path(), true));
  REQUIRE(built.status == 0);
  REQUIRE(eventually([&] { return host_stat(builder, "remote0.uploads") == 1; }, 20s));
  return built;
}

}  // namespace

TEST_CASE("nvrtc fleet: a builder's NVRTC result reaches a consumer host as a hit with identical outputs") {
  RedisServer redis;
  const std::string url = redis.url() + "/0";
  FleetKeys keys;
  FleetHost builder = fleet_host(url, keys, /*builder=*/true);
  FleetHost consumer = fleet_host(url, keys, /*builder=*/false);
  Sources sources;
  TempDir none;
  const ChildResult plain = run_program(compile_args(sources), run_env(none.file("none.sock"), false));
  REQUIRE(plain.status == 0);

  const ChildResult built = run_program(compile_args(sources), run_env(builder.daemon->socket_path(), true));
  REQUIRE(built.status == 0);
  CHECK(built.output == plain.output);
  CHECK(host_stat(builder, "nvrtc_puts") == 1);
  REQUIRE(eventually([&] { return host_stat(builder, "remote0.uploads") == 1; }, 20s));
  CHECK(redis_keys(redis, "idx").size() == 1);

  const ChildResult served = run_program(compile_args(sources), run_env(consumer.daemon->socket_path(), true));
  CHECK(served.status == 0);
  CHECK(served.output == plain.output);
  CHECK(host_stat(consumer, "remote0.hits") == 1);
  CHECK(host_stat(consumer, "nvrtc_hits") == 1);
  CHECK(host_stat(consumer, "nvrtc_puts") == 0);  // served, not compiled again on this host
  CHECK(host_stat(consumer, "entries") == 1);     // stored locally, signed by the builder
}

TEST_CASE("nvrtc fleet: an NVRTC record altered in the remote is refused, and the consumer gets NVRTC's own answer") {
  RedisServer redis;
  const std::string url = redis.url() + "/0";
  FleetKeys keys;
  FleetHost builder = fleet_host(url, keys, /*builder=*/true);
  FleetHost consumer = fleet_host(url, keys, /*builder=*/false);
  Sources sources;
  const ChildResult built = compile_and_upload(builder, sources);
  for (const char* space : {"idx", "fk"}) {
    const auto records = redis_keys(redis, space);
    REQUIRE(records.size() == 1);
    alter_last_byte(redis, records.front());
  }

  const ChildResult served = run_program(compile_args(sources), run_env(consumer.daemon->socket_path(), true));
  CHECK(served.status == 0);
  CHECK(served.output == built.output);  // NVRTC's own answer, compiled here
  CHECK(host_stat(consumer, "remote0.rejected.bad_signature") >= 1);
  CHECK(host_stat(consumer, "remote0.hits") == 0);
  CHECK(host_stat(consumer, "nvrtc_hits") == 0);
  CHECK(host_stat(consumer, "nvrtc_misses") == 1);
  CHECK(host_stat(consumer, "nvrtc_puts") == 1);
}

TEST_CASE("nvrtc fleet: a consumer that does not trust the builder's key refuses its NVRTC result as unknown_signer") {
  RedisServer redis;
  const std::string url = redis.url() + "/0";
  FleetKeys keys;
  FleetKeys other_keys("other");
  FleetHost builder = fleet_host(url, keys, /*builder=*/true);
  FleetHost stranger = fleet_host(url, other_keys, /*builder=*/false);
  Sources sources;
  const ChildResult built = compile_and_upload(builder, sources);

  const ChildResult served = run_program(compile_args(sources), run_env(stranger.daemon->socket_path(), true));
  CHECK(served.status == 0);
  CHECK(served.output == built.output);  // NVRTC's own answer, compiled here
  CHECK(host_stat(stranger, "remote0.rejected.unknown_signer") >= 1);
  CHECK(host_stat(stranger, "remote0.hits") == 0);
  CHECK(host_stat(stranger, "nvrtc_hits") == 0);
  CHECK(host_stat(stranger, "nvrtc_puts") == 1);
}
