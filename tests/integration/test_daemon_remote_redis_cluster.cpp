// The Redis backend (daemon/remote/redis/redis_backend.hpp) against a real 3-master Redis Cluster
// (tests/support/redis_cluster.hpp), started once for this file: our hash slots are the server's,
// keys of every master's slots are served, an id's "idx" and "lease" share a node, ping reaches
// every master, a lease's renewal and release (one script each) change only our own lease and are
// redirected like any command, and a live reshard's MOVED and ASK redirections are followed without
// one failed call, logged in as an ACL user allowed only the documented commands.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <daemon/remote/redis/hash_slot.hpp>
#include <daemon/remote/redis/redis_backend.hpp>
#include <daemon/remote/redis/redis_settings.hpp>

#include <tests/support/redis_cluster.hpp>

using namespace std::chrono_literals;
using jitcache::common::ErrorCode;
using jitcache::daemon::remote::Clock;
using jitcache::daemon::remote::key_hash_slot;
using jitcache::daemon::remote::LeaseChange;
using jitcache::daemon::remote::make_redis_backend;
using jitcache::daemon::remote::parse_redis_url;
using jitcache::daemon::remote::RedisBackend;
using jitcache::daemon::remote::RemoteKey;
using jitcache::testing::RedisCluster;
using jitcache::testing::RedisServerOptions;

namespace {

// The commands docs/remote-layout.md "Redis" lists for a builder in a Cluster, and nothing else.
const std::string k_builder_acl =
    "builder on >build-pw ~jitcache:* resetchannels -@all +get +exists +set +del +eval +ping +auth +cluster|slots "
    "+asking +lpop";

RedisCluster& cluster() {
  static RedisCluster shared = [] {
    RedisServerOptions options;
    options.acl_users = {k_builder_acl};
    return RedisCluster(3, options);
  }();
  return shared;
}

auto within(std::chrono::milliseconds time) { return Clock::now() + time; }

std::unique_ptr<RedisBackend> builder_backend() {
  std::string url = cluster().url();
  url.insert(std::string("redis+cluster://").size(), "builder@");
  auto settings = parse_redis_url(url);
  REQUIRE(settings);
  settings->password = "build-pw";
  return make_redis_backend(std::move(*settings));
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

std::string random_id(std::mt19937_64& random) {
  constexpr std::string_view k_hex = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 64; ++i) id += k_hex[random() % 16];
  return id;
}

std::string idx_name(const std::string& id) { return "jitcache:idx:{" + id + "}"; }
std::string lease_name(const std::string& id) { return "jitcache:lease:{" + id + "}"; }

}  // namespace

TEST_CASE("redis cluster backend: our hash slot of a key is the slot the server computes") {
  std::mt19937_64 random(17);
  for (const std::string key : {"foo", "{user1000}.following", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}"}) {
    CHECK(std::to_string(key_hash_slot(key)) == trimmed(cluster().node(0).cli({"CLUSTER", "KEYSLOT", key})));
  }
  for (int i = 0; i < 20; ++i) {
    const auto name = idx_name(random_id(random));
    CHECK(std::to_string(key_hash_slot(name)) == trimmed(cluster().node(1).cli({"CLUSTER", "KEYSLOT", name})));
  }
}

TEST_CASE("redis cluster backend: keys of every master's slots are served, and an id's idx and lease share a node") {
  auto backend = builder_backend();
  CHECK(backend->name() == "redis+cluster://builder@" + cluster().seeds());
  CHECK(backend->counters().slot_map_refreshes == 0);  // fetched on first use, not before
  std::mt19937_64 random(42);
  std::vector<std::string> ids;
  std::set<std::size_t> masters_used;
  const auto owners = cluster().slot_owners();
  for (int i = 0; i < 300; ++i) {
    ids.push_back(random_id(random));
    const std::string& id = ids.back();
    REQUIRE(backend->put(RemoteKey{"idx", id}, "record-" + id, 0ms, within(2s)));
    REQUIRE(backend->put_if_absent(RemoteKey{"lease", id}, "holder", 60000ms, within(2s)).value());
    masters_used.insert(owners.at(static_cast<std::size_t>(key_hash_slot(idx_name(id)))));
  }
  CHECK(masters_used.size() == 3);
  CHECK(backend->counters().slot_map_refreshes == 1);
  CHECK(backend->counters().moved == 0);  // the map routed every key to its master at once
  for (const auto& id : ids) {
    CHECK(backend->get(RemoteKey{"idx", id}, 1000, within(2s)).value().value() == "record-" + id);
    CHECK(backend->exists(RemoteKey{"lease", id}, within(2s)).value());
    CHECK_FALSE(backend->put_if_absent(RemoteKey{"lease", id}, "other", 60000ms, within(2s)).value());
  }
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(std::stoi(trimmed(cluster().node(i).cli({"DBSIZE"}))) > 0);
  }
  // Both keys of one id on the node that serves the id's slot.
  const auto& id = ids.front();
  auto& owner = cluster().node(cluster().owner_of_slot(key_hash_slot(id)));
  CHECK(trimmed(owner.cli({"EXISTS", idx_name(id), "jitcache:lease:{" + id + "}"})) == "2");
  for (const auto& removed : ids) {
    REQUIRE(backend->remove(RemoteKey{"idx", removed}, within(2s)));
    REQUIRE(backend->remove(RemoteKey{"lease", removed}, within(2s)));
  }
  CHECK_FALSE(backend->exists(RemoteKey{"idx", id}, within(2s)).value());
}

TEST_CASE("redis cluster backend: a lease's renewal and release change our own lease only, on every master") {
  auto backend = builder_backend();
  std::mt19937_64 random(11);
  std::set<std::size_t> masters_used;
  const auto owners = cluster().slot_owners();
  for (int i = 0; i < 30; ++i) {
    const std::string id = random_id(random);
    const RemoteKey lease{"lease", id};
    const std::size_t owner = owners.at(static_cast<std::size_t>(key_hash_slot(lease_name(id))));
    masters_used.insert(owner);
    REQUIRE(backend->put_if_absent(lease, "host-a 1 " + id, 300ms, within(2s)).value());
    CHECK(backend->renew_lease(lease, "host-a 1 " + id, "host-a 2 " + id, 60000ms, within(2s)).value() ==
          LeaseChange::done);
    CHECK(backend->get(lease, 100, within(2s)).value().value() == "host-a 2 " + id);
    CHECK(std::stoll(trimmed(cluster().node(owner).cli({"PTTL", lease_name(id)}))) > 300);
    // Ours expired and host b took the key: neither our renewal nor our release touches b's lease.
    REQUIRE(backend->put(lease, "host-b 3 " + id, 60000ms, within(2s)));
    CHECK(backend->renew_lease(lease, "host-a 2 " + id, "host-a 4 " + id, 1000ms, within(2s)).value() ==
          LeaseChange::lost);
    CHECK(backend->release_lease(lease, "host-a 2 " + id, within(2s)).value() == LeaseChange::lost);
    CHECK(backend->get(lease, 100, within(2s)).value().value() == "host-b 3 " + id);
    CHECK(std::stoll(trimmed(cluster().node(owner).cli({"PTTL", lease_name(id)}))) > 1000);
    CHECK(backend->release_lease(lease, "host-b 3 " + id, within(2s)).value() == LeaseChange::done);
    CHECK_FALSE(backend->exists(lease, within(2s)).value());
  }
  CHECK(masters_used.size() == 3);
  CHECK(backend->counters().moved == 0);  // each script went to its key's master at once
}

TEST_CASE("redis cluster backend: a lease script whose slot moved to another master follows the MOVED") {
  auto backend = builder_backend();
  constexpr int k_moved_slots = 10;
  std::mt19937_64 random(13);
  std::string id = random_id(random);
  while (key_hash_slot(lease_name(id)) >= k_moved_slots) id = random_id(random);
  const int slot = key_hash_slot(lease_name(id));
  const RemoteKey lease{"lease", id};
  REQUIRE(cluster().owner_of_slot(slot) == 0);
  REQUIRE(backend->put_if_absent(lease, "host-a 1", 60000ms, within(2s)).value());  // the map is fetched now

  cluster().reshard(0, 1, k_moved_slots, 1);
  cluster().wait_until_ok();
  REQUIRE(cluster().owner_of_slot(slot) == 1);
  const auto moved_before = backend->counters().moved;
  CHECK(backend->renew_lease(lease, "host-a 1", "host-a 2", 60000ms, within(2s)).value() == LeaseChange::done);
  CHECK(backend->counters().moved == moved_before + 1);
  CHECK(trimmed(cluster().node(1).cli({"GET", lease_name(id)})) == "host-a 2");
  CHECK(backend->release_lease(lease, "host-a 1", within(2s)).value() == LeaseChange::lost);
  CHECK(backend->release_lease(lease, "host-a 2", within(2s)).value() == LeaseChange::done);
  CHECK(backend->counters().moved == moved_before + 1);  // the MOVED fixed the map for the slot
  CHECK(trimmed(cluster().node(1).cli({"EXISTS", lease_name(id)})) == "0");

  cluster().reshard(1, 0, k_moved_slots, 1);
  cluster().wait_until_ok();
  CHECK(cluster().owner_of_slot(slot) == 0);
}

TEST_CASE("redis cluster backend: ping sends AUTH and PING to every master") {
  auto backend = builder_backend();
  auto pings = [](std::size_t node) {
    const auto stats = cluster().node(node).cli({"INFO", "commandstats"});
    const auto at = stats.find("cmdstat_ping:calls=");
    return at == std::string::npos ? 0 : std::stoi(stats.substr(at + 19));
  };
  const int before[3] = {pings(0), pings(1), pings(2)};
  REQUIRE(backend->ping(within(2s)));
  for (std::size_t i = 0; i < 3; ++i) CHECK(pings(i) == before[i] + 1);

  auto settings = parse_redis_url("redis+cluster://builder@" + cluster().node(2).address());
  REQUIRE(settings);
  settings->password = "not-it";
  CHECK(make_redis_backend(std::move(*settings))->ping(within(2s)).error().code == ErrorCode::forbidden);
}

TEST_CASE(
    "redis cluster backend: a standalone URL for a cluster node, or a cluster URL for a standalone server, says which to use") {
  auto standalone = parse_redis_url(cluster().node(0).url());
  REQUIRE(standalone);
  auto backend = make_redis_backend(std::move(*standalone));
  // Some key of another master's slots: node 0 answers MOVED.
  std::mt19937_64 random(5);
  std::string id = random_id(random);
  while (cluster().owner_of_slot(key_hash_slot(id)) == 0) id = random_id(random);
  auto moved = backend->get(RemoteKey{"idx", id}, 10, within(2s));
  REQUIRE_FALSE(moved);
  CHECK(moved.error().code == ErrorCode::io);
  CHECK(moved.error().message.find("redis+cluster://") != std::string::npos);

  jitcache::testing::RedisServer standalone_server;
  auto as_cluster = parse_redis_url("redis+cluster://" + standalone_server.address());
  REQUIRE(as_cluster);
  auto not_a_cluster = make_redis_backend(std::move(*as_cluster))->get(RemoteKey{"idx", id}, 10, within(2s));
  REQUIRE_FALSE(not_a_cluster);
  CHECK(not_a_cluster.error().code == ErrorCode::io);
  CHECK(not_a_cluster.error().message.find("not a Redis Cluster node") != std::string::npos);
}

TEST_CASE("redis cluster backend: during a live reshard MOVED and ASK are followed with no failed call") {
  auto backend = builder_backend();
  // Keys in the slots that move (node 0's first ones), 8 a slot moved one MIGRATE at a time, so
  // that calls meet slots mid-migration.
  constexpr int k_moved_slots = 150;
  std::mt19937_64 random(7);
  std::vector<std::string> ids;
  while (ids.size() < 8 * k_moved_slots) {
    auto id = random_id(random);
    if (key_hash_slot(id) < k_moved_slots) ids.push_back(std::move(id));
  }
  REQUIRE(cluster().owner_of_slot(0) == 0);
  for (const auto& id : ids) REQUIRE(backend->put(RemoteKey{"idx", id}, "v0-" + id, 0ms, within(2s)));

  constexpr int k_threads = 4;
  std::atomic<bool> resharding{true};
  std::atomic<int> calls{0};
  std::atomic<int> failures{0};
  std::atomic<int> wrong{0};
  std::string first_failure;
  std::mutex failure_mutex;
  auto note_failure = [&](const std::string& what) {
    ++failures;
    std::lock_guard lock(failure_mutex);
    if (first_failure.empty()) first_failure = what;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread owns every k_threads-th id, so what it reads back is what it wrote.
      for (int round = 1; resharding.load(); ++round) {
        for (std::size_t i = static_cast<std::size_t>(t); i < ids.size() && resharding.load(); i += k_threads) {
          const RemoteKey key{"idx", ids[i]};
          const std::string value = "v" + std::to_string(round) + "-" + ids[i];
          if (auto put = backend->put(key, value, 0ms, within(3s)); !put) note_failure("put: " + put.error().message);
          auto got = backend->get(key, 1000, within(3s));
          if (!got) {
            note_failure("get: " + got.error().message);
          } else if (!got->has_value() || **got != value) {
            ++wrong;
          }
          calls += 2;
        }
      }
    });
  }
  const auto started = Clock::now();
  std::string reshard_error;
  try {
    cluster().reshard(0, 1, k_moved_slots, 1);
    cluster().wait_until_ok();
    cluster().reshard(1, 0, k_moved_slots, 1);
  } catch (const std::exception& error) {
    reshard_error = error.what();
  }
  std::this_thread::sleep_for(100ms);  // calls after the last move, on the map as it ends
  resharding = false;
  for (auto& thread : threads) thread.join();
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  const auto counters = backend->counters();
  WARN(calls.load() << " calls during two reshards of " << k_moved_slots << " slots in " << elapsed.count() << " ms: "
                    << counters.moved << " MOVED, " << counters.asked << " ASK, " << counters.cluster_busy_retries
                    << " TRYAGAIN/CLUSTERDOWN, " << counters.slot_map_refreshes << " slot map fetches");
  REQUIRE(reshard_error.empty());
  INFO(first_failure);
  CHECK(failures == 0);
  CHECK(wrong == 0);
  CHECK(counters.moved > 0);
  CHECK(counters.asked > 0);
  CHECK(cluster().owner_of_slot(0) == 0);
  for (const auto& id : ids) {
    CHECK(backend->exists(RemoteKey{"idx", id}, within(2s)).value());
  }
}
