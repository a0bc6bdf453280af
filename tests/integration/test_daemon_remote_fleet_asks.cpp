// A herd of consumers alone costs one compile (docs/operations.md "A fleet", docs/remote-layout.md
// "Asks"): real jitcached daemons on a real redis-server on loopback, compiling with the fault
// worker's slow mode (tests/fakes/fault_compile_worker.cpp) so that every compile is counted:
//   - 7 consumers and a builder up that no client asks: 10 fresh keys, one compile per key, on the
//     builder, none on the consumers, whether the consumers come at once or one after another;
//   - an ask whose PTX is not the content digest it names, one over the size cap, and junk on the
//     queue are refused and counted (asks_refused), and nothing is compiled for them;
//   - no builder up: each consumer compiles for itself, once, and asks nothing;
//   - with the ACL lines of docs/operations.md verbatim a consumer's ask reaches the builder; a
//     consumer whose ACL predates asks warns once and compiles for itself, as before asks.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <proto/content_digest.hpp>
#include <proto/key.hpp>
#include <tests/support/documented_acl.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/fleet_herd.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/redis_server.hpp>

#include <daemon/remote/compile_ask.hpp>
#include <daemon/remote/redis/redis_backend.hpp>
#include <daemon/remote/remote_names.hpp>

using namespace jitcache;
using namespace jitcache::testing;
using namespace std::chrono_literals;
namespace remote = jitcache::daemon::remote;

namespace {

const std::vector<std::pair<std::string, std::string>> k_fault_env{{"FAULT_WORKER_VERSION", "13.0"}};

std::vector<std::string> ask_args() {
  return {"--compile-worker", JITCACHE_FAULT_WORKER_PATH, "--compile-jobs", "12", "--remote-lease-ttl", "2s"};
}

FleetHost fault_host(const std::string& url, const FleetKeys& keys, bool builder, std::vector<std::string> more = {}) {
  std::vector<std::string> args = ask_args();
  args.insert(args.end(), more.begin(), more.end());
  return start_fleet_host(url, keys, builder, args, "info", k_fault_env);
}

// The builders' announcement is in the remote (docs/remote-layout.md "Builders"): consumers ask.
bool builder_announced(const RedisServer& redis) {
  return redis.cli({"EXISTS", "jitcache:fleet:{builders}"}).rfind("1", 0) == 0;
}

std::uint64_t sum_stat(std::vector<FleetHost>& hosts, std::size_t from, const std::string& name) {
  std::uint64_t sum = 0;
  for (std::size_t h = from; h < hosts.size(); ++h) sum += host_stat(hosts[h], name);
  return sum;
}

std::vector<std::string> fresh_keys(const std::string& tag, unsigned ms, std::size_t count) {
  std::vector<std::string> ptx;
  for (std::size_t k = 0; k < count; ++k) ptx.push_back(slow_ptx(ms, tag + " key " + std::to_string(k)));
  return ptx;
}

// The daemon's own Redis backend, to write what a compromised consumer could.
std::unique_ptr<remote::RedisBackend> backend_for(const RedisServer& redis) {
  auto settings = remote::parse_redis_url(redis.url() + "/0");
  REQUIRE(settings.ok());
  return remote::make_redis_backend(std::move(*settings));
}

void plant_ask(remote::RedisBackend& backend, const proto::Digest256& key_id, const std::string& value) {
  const auto deadline = remote::Clock::now() + 2s;
  const std::string id = proto::to_hex(key_id);
  REQUIRE(backend.put({remote::k_space_ask, id}, value, 10'000ms, deadline).ok());
  REQUIRE(backend.append({remote::k_space_fleet, remote::k_fleet_asks}, "k " + id, 1024, deadline).ok());
}

}  // namespace

TEST_CASE("fleet asks: 7 consumers and a builder nobody asks: one compile per key, on the builder, in any order") {
  RedisServer redis;
  FleetKeys keys;
  std::vector<FleetHost> fleet;
  fleet.push_back(fault_host(redis.url() + "/0", keys, /*builder=*/true));
  for (int c = 0; c < 7; ++c) fleet.push_back(fault_host(redis.url() + "/0", keys, /*builder=*/false));
  REQUIRE(eventually([&] { return builder_announced(redis); }));
  const std::vector<std::size_t> consumers{1, 2, 3, 4, 5, 6, 7};
  std::uint64_t keys_asked = 0;
  for (const auto stagger : {15ms, 0ms}) {
    const std::string tag = "consumers only, " + std::to_string(stagger.count()) + " ms apart";
    INFO(tag);
    const auto ptx = fresh_keys(tag, 400, 10);
    const HerdResult result = run_herd(fleet, consumers, ptx, stagger);
    keys_asked += ptx.size();
    CHECK(result.answered == consumers.size() * ptx.size());
    CHECK(result.compiles == ptx.size());
    CHECK(sum_stat(fleet, 1, "compiles") == 0);
    CHECK(host_stat(fleet[0], "remote0.asks_taken") == keys_asked);
    CHECK(sum_stat(fleet, 1, "remote0.asks_sent") == keys_asked);  // one ask per key, fleet-wide
  }
  CHECK(host_stat(fleet[0], "remote0.asks_refused") == 0);
  CHECK(sum_stat(fleet, 1, "remote0.errors.forbidden") == 0);
}

TEST_CASE("fleet asks: a tampered ask, one over the size cap and junk are refused, counted, and compile nothing") {
  RedisServer redis;
  FleetKeys keys;
  FleetHost builder = fault_host(redis.url() + "/0", keys, /*builder=*/true);
  auto backend = backend_for(redis);

  // The PTX of one key under the content digest of another: a consumer that would have a builder
  // compile, and sign, bytes under a key they do not have.
  const std::string real = slow_ptx(50, "tampered: what the ask names");
  const std::string other = slow_ptx(50, "tampered: what the ask carries");
  const proto::KeyFields claimed =
      proto::key_of(fleet_compile_request(real), proto::content_digest(proto::as_bytes(real)));
  plant_ask(*backend, proto::key_id(claimed), remote::encode_compile_ask(claimed, proto::as_bytes(other)));
  REQUIRE(eventually([&] { return host_stat(builder, "remote0.asks_refused") == 1; }));

  // Over the cap: refused from its length, unread.
  proto::KeyFields big = claimed;
  big.options = claimed.options;
  big.content.bytes[0] ^= 1;
  plant_ask(*backend, proto::key_id(big), std::string(remote::k_max_compile_ask_bytes + 1, 'x'));
  REQUIRE(eventually([&] { return host_stat(builder, "remote0.asks_refused") == 2; }));

  // Not a note at all.
  REQUIRE(backend->append({remote::k_space_fleet, remote::k_fleet_asks}, "junk", 1024, remote::Clock::now() + 2s).ok());
  REQUIRE(eventually([&] { return host_stat(builder, "remote0.asks_refused") == 3; }));

  // A sound ask planted the same way is compiled: the refusals above were the checks' doing.
  const std::string sound = slow_ptx(50, "sound ask");
  const proto::KeyFields key =
      proto::key_of(fleet_compile_request(sound), proto::content_digest(proto::as_bytes(sound)));
  plant_ask(*backend, proto::key_id(key), remote::encode_compile_ask(key, proto::as_bytes(sound)));
  REQUIRE(eventually([&] { return host_stat(builder, "remote0.uploads") == 1; }));
  CHECK(host_stat(builder, "remote0.asks_taken") == 1);
  CHECK(host_stat(builder, "compiles") == 1);
  CHECK(host_stat(builder, "remote0.asks_refused") == 3);
  CHECK(redis.cli({"EXISTS", "jitcache:idx:{" + proto::to_hex(proto::key_id(key)) + "}"}).rfind("1", 0) == 0);
  CHECK(redis.cli({"EXISTS", "jitcache:idx:{" + proto::to_hex(proto::key_id(claimed)) + "}"}).rfind("0", 0) == 0);
  CHECK_THAT(read_file(builder.daemon->log_path()),
             Catch::Contains("its PTX does not have the content digest the ask names"));
}

TEST_CASE("fleet asks: no builder up, each consumer compiles for itself, once per key, and asks nothing") {
  RedisServer redis;
  FleetKeys keys;
  std::vector<FleetHost> fleet;
  for (int c = 0; c < 3; ++c) fleet.push_back(fault_host(redis.url() + "/0", keys, /*builder=*/false));
  const auto ptx = fresh_keys("no builder", 200, 2);
  const HerdResult result = run_herd(fleet, {0, 1, 2}, ptx, 0ms);
  CHECK(result.answered == 6);
  for (FleetHost& host : fleet) CHECK(host_stat(host, "compiles") == 2);
  CHECK(sum_stat(fleet, 0, "remote0.asks_sent") == 0);
}

TEST_CASE("fleet asks: the documented ACLs let a consumer ask, and a consumer on an ACL without asks compiles itself") {
  RedisServer redis;
  const std::vector<std::string> consumer_acl = documented_line("ACL SETUSER jc-reader ");
  const std::vector<std::string> builder_acl = documented_line("ACL SETUSER jc-builder ");
  // The consumer line as it was before asks: the wants queue alone.
  const std::vector<std::string> old_acl{"ACL",
                                         "SETUSER",
                                         "jc-old",
                                         "on",
                                         ">old-password",
                                         "%R~jitcache:*",
                                         "%W~jitcache:fleet:{wants}",
                                         "resetchannels",
                                         "-@all",
                                         "+auth",
                                         "+ping",
                                         "+get",
                                         "+exists",
                                         "+select",
                                         "+cluster|slots",
                                         "+asking",
                                         "+rpush",
                                         "+ltrim"};
  INFO(redis.log_tail());
  REQUIRE(redis.cli(consumer_acl).rfind("OK", 0) == 0);
  REQUIRE(redis.cli(builder_acl).rfind("OK", 0) == 0);
  REQUIRE(redis.cli(old_acl).rfind("OK", 0) == 0);
  TempDir secrets("jitcache-fleet-passwords");
  const auto as = [&](const std::string& user, const std::vector<std::string>& acl) {
    return std::vector<std::string>{"--remote-password-file", password_file(secrets, user, acl_password(acl))};
  };
  FleetKeys keys;
  const std::string at = "@" + redis.address() + "/0";
  FleetHost builder = fault_host("redis://jc-builder" + at, keys, true, as("builder", builder_acl));
  FleetHost consumer = fault_host("redis://jc-reader" + at, keys, false, as("reader", consumer_acl));
  FleetHost old = fault_host("redis://jc-old" + at, keys, false, as("old", old_acl));
  REQUIRE(eventually([&] { return builder_announced(redis); }));

  auto compiled = [](FleetHost& host, const std::string& ptx) {
    auto client = host.daemon->client();
    auto answer = client.compile(fleet_compile_request(ptx), 60s);
    return answer.ok() && answer->kind == client::transport::CompileAnswer::Kind::compiled;
  };
  CHECK(compiled(consumer, slow_ptx(200, "acl: the documented consumer")));
  CHECK(host_stat(consumer, "compiles") == 0);
  CHECK(host_stat(consumer, "remote0.asks_sent") == 1);
  CHECK(host_stat(consumer, "remote0.errors.forbidden") == 0);
  CHECK(host_stat(builder, "remote0.asks_taken") == 1);
  CHECK(host_stat(builder, "remote0.errors.forbidden") == 0);

  CHECK(compiled(old, slow_ptx(200, "acl: a consumer without asks")));
  CHECK(host_stat(old, "compiles") == 1);
  CHECK(host_stat(old, "remote0.asks_sent") == 0);
  CHECK_THAT(read_file(old.daemon->log_path()), Catch::Contains("asks builders to compile nothing"));
}
