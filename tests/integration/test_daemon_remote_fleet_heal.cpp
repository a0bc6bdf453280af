// What the remote holds, and how it heals (docs/remote-layout.md "Wants", docs/operations.md "A
// fleet"): real jitcached daemons on a real redis-server, compiling with the fault worker
// (tests/fakes/fault_compile_worker.cpp, whose images are all the same few bytes):
//   - Redis emptied, a consumer's LOOKUP brings the builder's entry back within the stated bound;
//   - Redis emptied, the builder's own local hit brings it back;
//   - a damaged image object is replaced by the builders, and the key is served again;
//   - a wrong-type value opens no breaker, and an over-long one is a rejection, not a remote error;
//   - the kept PTX goes up only with remote_upload_source.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include <proto/content_digest.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/fleet_herd.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/redis_server.hpp>

using namespace jitcache;
using namespace jitcache::testing;
using namespace std::chrono_literals;

namespace {

const std::vector<std::pair<std::string, std::string>> k_fault_env{{"FAULT_WORKER_VERSION", "13.0"}};

FleetHost fault_host(RedisServer& redis, const FleetKeys& keys, bool builder, std::vector<std::string> more = {}) {
  std::vector<std::string> args{"--compile-worker", JITCACHE_FAULT_WORKER_PATH};
  args.insert(args.end(), more.begin(), more.end());
  return start_fleet_host(redis.url() + "/0", keys, builder, args, "info", k_fault_env);
}

// The builder compiles `ptx` and uploads it; its key.
proto::KeyFields compiled_and_uploaded(FleetHost& builder, const std::string& ptx) {
  const auto request = fleet_compile_request(ptx);
  auto client = builder.daemon->client();
  const std::uint64_t uploads = host_stat(builder, "remote0.uploads");
  auto answer = client.compile(request, 60s);
  REQUIRE(answer.ok());
  REQUIRE(answer->kind == client::transport::CompileAnswer::Kind::compiled);
  REQUIRE(eventually([&] { return host_stat(builder, "remote0.uploads") == uploads + 1; }));
  return proto::key_of(request, proto::content_digest(request.ptx));
}

std::string idx_name(const proto::KeyFields& key) { return "jitcache:idx:{" + proto::to_hex(proto::key_id(key)) + "}"; }

bool in_redis(RedisServer& redis, const std::string& name) { return redis.cli({"EXISTS", name}).find('1') == 0; }

bool served(FleetHost& host, const proto::KeyFields& key) {
  auto client = host.daemon->client();
  auto found = client.lookup(key);
  return found.ok() && found->has_value();
}

}  // namespace

TEST_CASE("fleet heal: Redis emptied, a consumer's LOOKUP brings the builder's entry back within a second") {
  RedisServer redis;
  FleetKeys keys;
  FleetHost builder = fault_host(redis, keys, true);
  FleetHost consumer = fault_host(redis, keys, false);
  const proto::KeyFields key = compiled_and_uploaded(builder, slow_ptx(10, "heal by a consumer"));
  REQUIRE(in_redis(redis, idx_name(key)));

  redis.cli({"FLUSHALL"});
  CHECK_FALSE(served(consumer, key));  // a miss everywhere: the consumer asks the builders
  const auto asked = std::chrono::steady_clock::now();
  // The stated bound (docs/operations.md "A fleet"): one heal tick (0.1 s) for the note to be
  // taken, plus the upload; a second leaves room for a loaded CI machine.
  CHECK(eventually([&] { return in_redis(redis, idx_name(key)); }, 1s));
  const double back_ms =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - asked).count() / 1000.0;
  INFO("back in Redis after " << back_ms << " ms");
  CHECK(host_stat(consumer, "remote0.wants_sent") == 1);
  CHECK(host_stat(builder, "remote0.heals") == 1);
  CHECK(served(consumer, key));
  CHECK(host_stat(consumer, "compiles") == 0);
}

TEST_CASE("fleet heal: Redis emptied, the builder's own local hit brings its entry back") {
  RedisServer redis;
  FleetKeys keys;
  FleetHost builder = fault_host(redis, keys, true);
  const proto::KeyFields key = compiled_and_uploaded(builder, slow_ptx(10, "heal by a hit"));
  redis.cli({"FLUSHALL"});
  CHECK(served(builder, key));  // a local hit
  CHECK(eventually([&] { return in_redis(redis, idx_name(key)); }, 2s));
  FleetHost consumer = fault_host(redis, keys, false);
  CHECK(served(consumer, key));
}

TEST_CASE("fleet heal: a damaged image object in Redis is replaced and its key served again") {
  RedisServer redis;
  FleetKeys keys;
  // Heals off on the builder: the consumer's failed LOOKUP below asks for the first key again, and a
  // heal would upload it too, so the second key's upload must be what rewrites the object (and a
  // heal landing between its count and the compile's made the count jump by two).
  FleetHost builder = fault_host(redis, keys, true, {"--remote-heal-rate", "0"});
  FleetHost consumer = fault_host(redis, keys, false);
  const proto::KeyFields first = compiled_and_uploaded(builder, slow_ptx(10, "damaged image, first key"));
  const std::string images = redis.cli({"--scan", "--pattern", "jitcache:img:*"});
  const std::string image = images.substr(0, images.find('\n'));
  REQUIRE(image.rfind("jitcache:img:", 0) == 0);
  redis.cli({"SET", image, "not a zstd frame"});
  CHECK_FALSE(served(consumer, first));
  // The same image under another key: uploaded whole again, not skipped because an object exists.
  (void)compiled_and_uploaded(builder, slow_ptx(10, "damaged image, second key"));
  CHECK(eventually([&] { return served(consumer, first); }, 2s));
  CHECK(host_stat(consumer, "compiles") == 0);
  CHECK(host_stat(builder, "remote0.heals") == 0);
}

TEST_CASE("fleet heal: a wrong-type value opens no breaker, and an over-long value is a rejection only") {
  RedisServer redis;
  FleetKeys keys;
  FleetHost consumer = fault_host(redis, keys, false);
  const std::string wrong_type_ptx = "wrong type";
  const auto request = fleet_compile_request(wrong_type_ptx);
  const proto::KeyFields key = proto::key_of(request, proto::content_digest(request.ptx));
  redis.cli({"RPUSH", idx_name(key), "a list, not a record"});
  for (int i = 0; i < 5; ++i) CHECK_FALSE(served(consumer, key));
  CHECK(host_stat(consumer, "remote0.breaker_opens") == 0);
  CHECK(host_stat(consumer, "remote0.errors.server") == 0);
  CHECK(host_stat(consumer, "remote0.rejected.malformed_record") >= 1);

  const std::string too_long_ptx = "too long";
  const auto long_request = fleet_compile_request(too_long_ptx);
  const proto::KeyFields long_key = proto::key_of(long_request, proto::content_digest(long_request.ptx));
  redis.cli({"SET", idx_name(long_key), std::string(70'000, 'x')});
  const std::uint64_t rejected = host_stat(consumer, "remote0.rejected.malformed_record");
  CHECK_FALSE(served(consumer, long_key));
  CHECK(host_stat(consumer, "remote0.rejected.malformed_record") == rejected + 1);
  CHECK(host_stat(consumer, "remote0.errors.too_large") == 0);
  CHECK(host_stat(consumer, "remote0.breaker_opens") == 0);
}

TEST_CASE("fleet heal: the kept PTX goes up only with remote_upload_source") {
  RedisServer redis;
  FleetKeys keys;
  FleetHost plain = fault_host(redis, keys, true);
  (void)compiled_and_uploaded(plain, slow_ptx(10, "no source kept"));
  CHECK(redis.cli({"--scan", "--pattern", "jitcache:src:*"}).find("src") == std::string::npos);
  FleetHost keeping = fault_host(redis, keys, true, {"--remote-upload-source"});
  (void)compiled_and_uploaded(keeping, slow_ptx(10, "source kept"));
  CHECK(redis.cli({"--scan", "--pattern", "jitcache:src:*"}).find("src") != std::string::npos);
}
