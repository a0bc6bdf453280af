// The fleet tier end to end inside one process: two "hosts" (each a real SQLite store behind a
// TieredStore) share one in-memory remote (tests/support/memory_backend.hpp), so the tests can
// place exact bytes and inject failures. The same paths run against real Redis and nginx servers
// in tests/integration/test_daemon_remote_*.cpp.
#include <catch2/catch.hpp>

#include <thread>

#include <daemon/remote/fleet_gate.hpp>
#include <daemon/remote/record/image_object.hpp>
#include <daemon/remote/remote_names.hpp>
#include <daemon/remote/remote_tier.hpp>
#include <daemon/remote/tiered_store.hpp>
#include <proto/jit_options.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/memory_backend.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using namespace jitcache::testing;
using namespace std::chrono_literals;
namespace remote = jitcache::daemon::remote;

struct Host {
  StoreDir dir;
  std::unique_ptr<SqliteStore> local;
  std::unique_ptr<remote::RemoteTier> tier;
  std::unique_ptr<remote::TieredStore> store;

  Host(std::shared_ptr<MemoryBackend> backend, std::optional<proto::SigningKey> key, remote::TrustedKeys trusted,
       remote::TierSettings settings = {}) {
    local = open_store(dir);
    // The tier owns its backends; the test keeps the shared one alive and reaches it directly.
    struct Shared final : remote::RemoteBackend {
      std::shared_ptr<MemoryBackend> b;
      std::string name() const override { return b->name(); }
      common::Result<std::optional<std::string>> get(remote::RemoteKey k, std::size_t m, remote::Deadline d) override {
        return b->get(k, m, d);
      }
      common::Result<bool> exists(remote::RemoteKey k, remote::Deadline d) override { return b->exists(k, d); }
      common::Result<void> put(remote::RemoteKey k, std::string_view v, std::chrono::milliseconds t,
                               remote::Deadline d) override {
        return b->put(k, v, t, d);
      }
      common::Result<bool> put_if_absent(remote::RemoteKey k, std::string_view v, std::chrono::milliseconds t,
                                         remote::Deadline d) override {
        return b->put_if_absent(k, v, t, d);
      }
      common::Result<void> remove(remote::RemoteKey k, remote::Deadline d) override { return b->remove(k, d); }
      common::Result<void> ping(remote::Deadline d) override { return b->ping(d); }
    };
    auto shared = std::make_unique<Shared>();
    shared->b = std::move(backend);
    std::vector<std::unique_ptr<remote::RemoteBackend>> backends;
    backends.push_back(std::move(shared));
    settings.host = "test-host";
    tier = std::make_unique<remote::RemoteTier>(settings, std::move(backends), std::move(trusted), std::move(key));
    store = std::make_unique<remote::TieredStore>(*local, *tier);
  }
  const remote::RemoteCounters& counters() const { return tier->remote(0).counters; }
};

std::uint64_t read(const remote::RemoteCounters::Counter& c) { return c.load(); }

// A key the record's checks accept (make_key's options are no canonical option string).
proto::KeyFields valid_key(int seed) {
  proto::KeyFields key = make_key(seed);
  key.options = *proto::canonicalize_option_text("");
  return key;
}

bool hit(daemon::store::Store& store, const proto::KeyFields& key) {
  auto found = store.lookup(Selector::key(key), Visibility{});
  REQUIRE(found.ok());
  return daemon::store::is_hit(*found);
}

struct Fleet {
  std::shared_ptr<MemoryBackend> backend = std::make_shared<MemoryBackend>();
  proto::SigningKey builder_key = proto::SigningKey::generate();
  remote::TrustedKeys trusted{{builder_key.public_key()}};
  Host builder;
  Host consumer{backend, std::nullopt, trusted};

  Fleet() : builder(backend, std::move(builder_key), remote::TrustedKeys{}) {}

  // What the builder stored in the shared namespace, once its record is up.
  proto::KeyFields upload(int seed) {
    const proto::KeyFields key = valid_key(seed);
    const auto image = make_image(static_cast<std::uint64_t>(seed), 4096);
    put_ok(*builder.store, make_put(key, image));
    REQUIRE(eventually([&] { return backend->value("idx/" + proto::to_hex(proto::key_id(key))).has_value(); }));
    return key;
  }
};

}  // namespace

TEST_CASE("tiered store: another host's lookup serves what a builder uploaded, and stores it with its signer") {
  Fleet fleet;
  const proto::KeyFields key = fleet.upload(1);
  CHECK(read(fleet.builder.counters().uploads) == 1);
  CHECK(hit(*fleet.consumer.store, key));

  CHECK(read(fleet.consumer.counters().hits) == 1);
  auto local = fleet.consumer.local->lookup(Selector::key(key), Visibility{});
  REQUIRE(local.ok());
  REQUIRE(daemon::store::is_hit(*local));
  CHECK_THAT(std::get<Hit>(*local).info.producer, Catch::Contains("signer"));
}

TEST_CASE("tiered store: a lookup by fast key finds the uploaded entry too") {
  Fleet fleet;
  const proto::KeyFields key = fleet.upload(2);
  auto found =
      fleet.consumer.store->lookup(Selector::fast_key(proto::fast_key_of(key, content_fast_of(key))), Visibility{});
  REQUIRE(found.ok());
  CHECK(daemon::store::is_hit(*found));
}

TEST_CASE("tiered store: a local hit never touches the remote") {
  Fleet fleet;
  const proto::KeyFields key = fleet.upload(3);
  REQUIRE(hit(*fleet.consumer.store, key));
  const int calls = fleet.backend->calls();
  for (int i = 0; i < 5; ++i) CHECK(hit(*fleet.consumer.store, key));
  CHECK(fleet.backend->calls() == calls);
}

TEST_CASE("tiered store: a uid's own namespace and a host without a signing key upload nothing") {
  Fleet fleet;
  const auto image = make_image(4, 4096);
  put_ok(*fleet.builder.store, make_put(valid_key(4), image, 1000));
  put_ok(*fleet.consumer.store, make_put(valid_key(5), image));
  std::this_thread::sleep_for(200ms);
  CHECK(fleet.backend->contents().empty());
  CHECK(read(fleet.builder.counters().uploads) == 0);
  CHECK_FALSE(fleet.consumer.tier->uploads());
}

TEST_CASE("tiered store: every tampering is rejected by its reason, counted and never served") {
  Fleet fleet;
  const proto::KeyFields key = fleet.upload(6);
  const proto::KeyFields other = fleet.upload(7);
  const std::string idx = "idx/" + proto::to_hex(proto::key_id(key));
  const std::string other_idx = "idx/" + proto::to_hex(proto::key_id(other));
  const std::string record = *fleet.backend->value(idx);
  auto& rejections = fleet.consumer.counters().rejections;
  auto rejected = [&](remote::Rejection reason) { return read(rejections[static_cast<std::size_t>(reason)]); };

  SECTION("a flipped signature byte") {
    std::string bad = record;
    bad[bad.size() - 1] = static_cast<char>(bad[bad.size() - 1] ^ 0x01);
    fleet.backend->set(idx, bad);
    CHECK_FALSE(hit(*fleet.consumer.store, key));
    CHECK(rejected(remote::Rejection::bad_signature) == 1);
  }
  SECTION("a record signed by a key nobody trusts") {
    Host rogue(fleet.backend, proto::SigningKey::generate(), remote::TrustedKeys{});
    const proto::KeyFields forged = valid_key(8);
    put_ok(*rogue.store, make_put(forged, make_image(8, 4096)));
    REQUIRE(eventually([&] { return read(rogue.counters().uploads) == 1; }));
    CHECK_FALSE(hit(*fleet.consumer.store, forged));
    CHECK(rejected(remote::Rejection::unknown_signer) == 1);
  }
  SECTION("a valid record replayed under another key id") {
    fleet.backend->set(other_idx, record);
    CHECK_FALSE(hit(*fleet.consumer.store, other));
    CHECK(rejected(remote::Rejection::key_mismatch) == 1);
  }
  SECTION("an image replaced, truncated or missing") {
    const auto contents = fleet.backend->contents();
    std::string image_name;
    for (const auto& [name, value] : contents) {
      if (name.rfind("img/", 0) == 0) image_name = name;
    }
    REQUIRE_FALSE(image_name.empty());
    const std::string object = contents.at(image_name);
    for (const auto& [name, value] : contents) {
      if (name.rfind("img/", 0) == 0) fleet.backend->set(name, object.substr(0, object.size() / 2));
    }
    CHECK_FALSE(hit(*fleet.consumer.store, key));
    CHECK(rejected(remote::Rejection::image_corrupt) + rejected(remote::Rejection::image_mismatch) == 1);
    const auto replacement = make_image(99, 4096);
    for (const auto& [name, value] : contents) {
      if (name.rfind("img/", 0) == 0) fleet.backend->set(name, remote::encode_image_object(proto::Bytes(replacement)));
    }
    CHECK_FALSE(hit(*fleet.consumer.store, other));
    CHECK(rejected(remote::Rejection::image_mismatch) >= 1);
  }
  SECTION("garbage under the key id") {
    fleet.backend->set(idx, "this is not a record");
    CHECK_FALSE(hit(*fleet.consumer.store, key));
    CHECK(rejected(remote::Rejection::malformed_record) == 1);
  }
  CHECK(read(fleet.consumer.counters().hits) == 0);
}

TEST_CASE("tiered store: a remote that fails every call is skipped once its breaker opens") {
  Fleet fleet;
  fleet.backend->fail_next(-1, common::ErrorCode::timeout);
  for (int i = 0; i < 10; ++i) CHECK_FALSE(hit(*fleet.consumer.store, valid_key(100 + i)));
  CHECK(read(fleet.consumer.counters().breaker_opens) == 1);
  CHECK(read(fleet.consumer.counters().skipped) >= 6);
  CHECK(fleet.consumer.tier->remote(0).breaker.state() == remote::CircuitBreaker::State::open);
}

TEST_CASE("fleet lease: one host wins, the other sees it held, and after the release the other wins") {
  auto backend = std::make_shared<MemoryBackend>();
  Host a(backend, proto::SigningKey::generate(), remote::TrustedKeys{});
  Host b(backend, proto::SigningKey::generate(), remote::TrustedKeys{});
  const proto::Digest256 id = proto::key_id(valid_key(20));
  CHECK(a.tier->take_lease(id).take == remote::LeaseTake::won);
  CHECK(b.tier->take_lease(id).take == remote::LeaseTake::held_elsewhere);
  CHECK(b.tier->lease_held(id).has_value());
  a.tier->release_lease(id);
  CHECK_FALSE(b.tier->lease_held(id).has_value());
  CHECK(b.tier->take_lease(id).take == remote::LeaseTake::won);
}

TEST_CASE("fleet lease: a lease without server expiry is taken over once its written expiry has passed") {
  auto backend = std::make_shared<MemoryBackend>(/*expiring=*/false);
  remote::TierSettings settings;
  settings.lease_ttl = 300ms;
  Host a(backend, proto::SigningKey::generate(), remote::TrustedKeys{}, settings);
  Host b(backend, proto::SigningKey::generate(), remote::TrustedKeys{}, settings);
  const proto::Digest256 id = proto::key_id(valid_key(21));
  // A holder that died: its value stays, its written expiry passes.
  backend->set("lease/" + proto::to_hex(id), "dead-host 1 1");
  CHECK(a.tier->take_lease(id).take == remote::LeaseTake::won);
  CHECK(b.tier->take_lease(id).take == remote::LeaseTake::held_elsewhere);
}

TEST_CASE("fleet lease: the holder renews its lease past its ttl, and a dead holder's lease expires") {
  auto backend = std::make_shared<MemoryBackend>();
  remote::TierSettings settings;
  settings.lease_ttl = 300ms;
  const proto::Digest256 id = proto::key_id(valid_key(22));
  Host b(backend, proto::SigningKey::generate(), remote::TrustedKeys{}, settings);
  {
    Host a(backend, proto::SigningKey::generate(), remote::TrustedKeys{}, settings);
    REQUIRE(a.tier->take_lease(id).take == remote::LeaseTake::won);
    std::this_thread::sleep_for(900ms);
    CHECK(b.tier->take_lease(id).take == remote::LeaseTake::held_elsewhere);
  }  // a stops renewing (a host that died leaves its lease to expire)
  std::this_thread::sleep_for(400ms);
  CHECK(b.tier->take_lease(id).take == remote::LeaseTake::won);
}

TEST_CASE("fleet gate: a host that finds the lease held waits and is served the holder's upload") {
  Fleet fleet;
  Host second(fleet.backend, proto::SigningKey::generate(), fleet.trusted);
  const proto::KeyFields key = valid_key(30);
  const proto::Digest256 id = proto::key_id(key);
  REQUIRE(fleet.builder.tier->take_lease(id).take == remote::LeaseTake::won);
  remote::FleetGate gate(*second.tier, *second.store);
  std::atomic<bool> stop{false};
  std::thread holder([&] {
    std::this_thread::sleep_for(300ms);
    put_ok(*fleet.builder.store, make_put(key, make_image(30, 4096)));  // uploads, then releases the lease
  });
  auto outcome = gate.before_compile(id, stop);
  holder.join();
  REQUIRE(outcome.has_value());
  CHECK(outcome->from_elsewhere);
  CHECK(outcome->image == make_image(30, 4096));
  CHECK(read(second.counters().leases_waited) == 1);
  CHECK(read(second.counters().lease_waits_served) == 1);
  CHECK(hit(*second.local, key));
}

TEST_CASE("fleet gate: with no lease held the host compiles at once and holds the lease") {
  Fleet fleet;
  remote::FleetGate gate(*fleet.builder.tier, *fleet.builder.store);
  std::atomic<bool> stop{false};
  const proto::Digest256 id = proto::key_id(valid_key(31));
  CHECK_FALSE(gate.before_compile(id, stop).has_value());
  CHECK(read(fleet.builder.counters().leases_won) == 1);
  CHECK(fleet.consumer.tier->lease_held(id).has_value());

  daemon::compile::CompileOutcome failed;
  failed.kind = daemon::compile::OutcomeKind::compile_error;
  gate.after_compile(id, failed);
  CHECK_FALSE(fleet.consumer.tier->lease_held(id).has_value());
}

TEST_CASE("fleet gate: a waiter whose lease checks fail keeps waiting while the lease lasts, and is served") {
  Fleet fleet;
  Host second(fleet.backend, proto::SigningKey::generate(), fleet.trusted);
  const proto::KeyFields key = valid_key(32);
  const proto::Digest256 id = proto::key_id(key);
  REQUIRE(fleet.builder.tier->take_lease(id).take == remote::LeaseTake::won);
  remote::FleetGate gate(*second.tier, *second.store);
  std::atomic<bool> stop{false};
  std::thread holder([&] {
    std::this_thread::sleep_for(100ms);
    fleet.backend->fail_next(-1);  // the remote answers nothing for a while: unknown, not gone
    std::this_thread::sleep_for(700ms);
    fleet.backend->fail_next(0);
    put_ok(*fleet.builder.store, make_put(key, make_image(32, 4096)));  // uploads, then releases the lease
  });
  auto outcome = gate.before_compile(id, stop);
  holder.join();
  REQUIRE(outcome.has_value());
  CHECK(outcome->from_elsewhere);
  CHECK(read(second.counters().lease_waits_served) == 1);
  CHECK(read(second.counters().lease_waits_expired) == 0);
}
