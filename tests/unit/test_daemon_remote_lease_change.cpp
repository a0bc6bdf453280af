// Fleet-wide single flight's leases when this host's lease was lost (daemon/remote/lease_change.hpp,
// docs/remote-layout.md "Lease"): another host takes the key at the worst moment, between the read
// of the lease and the write that would follow it, and this host's renewal, release or take-over of
// a stale lease must leave that host's lease as it is. A tier that reads and then writes fails
// these tests; one that compares and changes in one step (the backends' renew_lease and
// release_lease, in memory here as in Redis) passes. Also: renewal keeps a lease alive in one step
// and in the two steps of a server without it (HTTP), and a server that refuses the one step (an
// ACL without EVAL) is used in two.
#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <daemon/remote/remote_names.hpp>
#include <daemon/remote/remote_tier.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/memory_backend.hpp>

namespace {

using namespace jitcache;
using namespace jitcache::testing;
using namespace std::chrono_literals;
namespace remote = jitcache::daemon::remote;
using remote::LeaseChange;

// A value another host's lease could have: far from expiring.
const std::string k_thief = "thief-host 9 99999999999999";

// A MemoryBackend with a hand on the moment between a read of a lease and the change that follows
// it: once armed, a chosen call that names the lease lets "another host" take it, right after that
// call read it (get) or right before it changes it (every other call). `refuse_scripts`:
// renew_lease and release_lease answer forbidden, as Redis does for a user whose ACL lacks EVAL.
class RacingBackend final : public remote::RemoteBackend {
 public:
  explicit RacingBackend(std::shared_ptr<MemoryBackend> memory, bool refuse_scripts = false)
      : m_memory(std::move(memory)), m_refuse_scripts(refuse_scripts) {}

  // The call naming lease `key_id` after `skip` others that name it finds `k_thief` taking it.
  void take_over_at_call(const proto::Digest256& key_id, int skip = 0) {
    std::lock_guard lock(m_mutex);
    m_target = std::string(remote::k_space_lease) + "/" + proto::to_hex(key_id);
    m_skip = skip;
  }
  bool taken_over() const { return m_taken_over.load(); }

  std::string name() const override { return m_memory->name(); }
  common::Result<std::optional<std::string>> get(remote::RemoteKey k, std::size_t max, remote::Deadline d) override {
    auto read = m_memory->get(k, max, d);
    race(k);
    return read;
  }
  common::Result<bool> exists(remote::RemoteKey k, remote::Deadline d) override {
    race(k);
    return m_memory->exists(k, d);
  }
  common::Result<void> put(remote::RemoteKey k, std::string_view v, std::chrono::milliseconds t,
                           remote::Deadline d) override {
    race(k);
    return m_memory->put(k, v, t, d);
  }
  common::Result<bool> put_if_absent(remote::RemoteKey k, std::string_view v, std::chrono::milliseconds t,
                                     remote::Deadline d) override {
    race(k);
    return m_memory->put_if_absent(k, v, t, d);
  }
  common::Result<void> remove(remote::RemoteKey k, remote::Deadline d) override {
    race(k);
    return m_memory->remove(k, d);
  }
  common::Result<LeaseChange> renew_lease(remote::RemoteKey k, std::string_view current, std::string_view renewed,
                                          std::chrono::milliseconds t, remote::Deadline d) override {
    if (m_refuse_scripts) return refused();
    race(k);
    return m_memory->renew_lease(k, current, renewed, t, d);
  }
  common::Result<LeaseChange> release_lease(remote::RemoteKey k, std::string_view current,
                                            remote::Deadline d) override {
    if (m_refuse_scripts) return refused();
    race(k);
    return m_memory->release_lease(k, current, d);
  }
  common::Result<void> ping(remote::Deadline d) override { return m_memory->ping(d); }

 private:
  static common::Error refused() {
    return common::make_error(common::ErrorCode::forbidden,
                              "NOPERM this user has no permissions to run the 'eval' command");
  }
  void race(remote::RemoteKey key) {
    std::lock_guard lock(m_mutex);
    if (m_target.empty() || m_target != std::string(key.space) + "/" + std::string(key.id)) return;
    if (m_skip-- > 0) return;
    m_memory->set(m_target, k_thief);
    m_target.clear();
    m_taken_over = true;
  }

  std::shared_ptr<MemoryBackend> m_memory;
  const bool m_refuse_scripts;
  std::mutex m_mutex;
  std::string m_target;  // "lease/<key id>" while armed
  int m_skip = 0;
  std::atomic<bool> m_taken_over{false};
};

// One host of the fleet: a tier that signs (so it takes leases) on a RacingBackend of `memory`,
// which the hosts of one test share.
struct Host {
  RacingBackend* backend = nullptr;  // owned by the tier
  std::unique_ptr<remote::RemoteTier> tier;

  Host(std::shared_ptr<MemoryBackend> memory, std::chrono::milliseconds lease_ttl, std::string name,
       bool refuse_scripts = false) {
    auto racing = std::make_unique<RacingBackend>(std::move(memory), refuse_scripts);
    backend = racing.get();
    std::vector<std::unique_ptr<remote::RemoteBackend>> backends;
    backends.push_back(std::move(racing));
    remote::TierSettings settings;
    settings.host = std::move(name);
    settings.lease_ttl = lease_ttl;
    tier = std::make_unique<remote::RemoteTier>(settings, std::move(backends), remote::TrustedKeys{},
                                                proto::SigningKey::generate());
  }
};

proto::Digest256 key_id(std::uint8_t seed) {
  proto::Digest256 id;
  id.bytes.fill(seed);
  return id;
}

std::string lease_name(const proto::Digest256& id) {
  return std::string(remote::k_space_lease) + "/" + proto::to_hex(id);
}

// The expires_at_ms of a lease value "host pid expires_at_ms".
long long written_expiry(const std::string& value) { return std::stoll(value.substr(value.rfind(' ') + 1)); }

std::uint64_t forbidden_errors(const remote::RemoteCounters& counters) {
  for (std::size_t i = 0; i < remote::k_remote_error_kinds.size(); ++i) {
    if (remote::k_remote_error_kinds[i].first == common::ErrorCode::forbidden) return counters.errors[i].load();
  }
  FAIL("no error kind for forbidden");
  return 0;
}

}  // namespace

TEST_CASE("fleet lease: a renewal that finds another host's lease taken since leaves it as it is") {
  auto memory = std::make_shared<MemoryBackend>();
  Host a(memory, 300ms, "host-a");  // renews every 100 ms
  const proto::Digest256 id = key_id(1);
  REQUIRE(a.tier->take_lease(id).take == remote::LeaseTake::won);
  a.backend->take_over_at_call(id);  // the next call on the lease is the renewal's
  REQUIRE(eventually([&] { return a.backend->taken_over(); }, 5s));
  std::this_thread::sleep_for(250ms);  // more renewal rounds, were the lease still held here
  CHECK(memory->value(lease_name(id)) == k_thief);
  // Given up: the release after the upload does not remove the other host's lease either.
  a.tier->release_lease(id);
  CHECK(memory->value(lease_name(id)) == k_thief);
}

TEST_CASE("fleet lease: a release that finds another host's lease taken since leaves it as it is") {
  auto memory = std::make_shared<MemoryBackend>();
  Host a(memory, 60s, "host-a");  // no renewal during the test
  const proto::Digest256 id = key_id(2);
  REQUIRE(a.tier->take_lease(id).take == remote::LeaseTake::won);
  a.backend->take_over_at_call(id);
  a.tier->release_lease(id);
  REQUIRE(a.backend->taken_over());
  CHECK(memory->value(lease_name(id)) == k_thief);

  // Without a race the release removes our own lease.
  REQUIRE(a.tier->take_lease(key_id(3)).take == remote::LeaseTake::won);
  a.tier->release_lease(key_id(3));
  CHECK_FALSE(memory->value(lease_name(key_id(3))).has_value());
}

TEST_CASE("fleet lease: a stale lease is removed only as it was read, not the lease another host took since") {
  auto memory = std::make_shared<MemoryBackend>();
  Host a(memory, 60s, "host-a");
  const proto::Digest256 id = key_id(4);
  memory->set(lease_name(id), "dead-host 1 1");  // a holder that died: its written expiry long past
  // take_lease's put_if_absent finds it held, its get reads the stale value, and right then another
  // host takes the key over: a removes only what it read, so it finds the new lease held.
  a.backend->take_over_at_call(id, /*skip=*/1);
  CHECK(a.tier->take_lease(id).take == remote::LeaseTake::held_elsewhere);
  REQUIRE(a.backend->taken_over());
  CHECK(memory->value(lease_name(id)) == k_thief);
}

TEST_CASE("fleet lease: renewal keeps the lease past its ttl, with a later written expiry, in one step or two") {
  for (const bool one_step : {true, false}) {
    INFO((one_step ? "a server that compares and changes in one step (Redis)" : "a server without (HTTP)"));
    auto memory = std::make_shared<MemoryBackend>(/*expiring=*/one_step, /*leases=*/true, /*atomic_leases=*/one_step);
    Host a(memory, 300ms, "host-a");
    Host b(memory, 300ms, "host-b");
    const proto::Digest256 id = key_id(5);
    REQUIRE(a.tier->take_lease(id).take == remote::LeaseTake::won);
    const std::string taken = memory->value(lease_name(id)).value();
    std::this_thread::sleep_for(700ms);  // over two ttls
    const auto now = memory->value(lease_name(id));
    REQUIRE(now.has_value());
    CHECK(now->starts_with("host-a "));
    CHECK(written_expiry(*now) > written_expiry(taken));
    CHECK(b.tier->take_lease(id).take == remote::LeaseTake::held_elsewhere);
    a.tier->release_lease(id);
    CHECK_FALSE(memory->value(lease_name(id)).has_value());
    CHECK(b.tier->take_lease(id).take == remote::LeaseTake::won);
  }
}

TEST_CASE("fleet lease: a server that refuses the one step (an ACL without EVAL) is used in two, its breaker closed") {
  auto memory = std::make_shared<MemoryBackend>();
  Host a(memory, 300ms, "host-a", /*refuse_scripts=*/true);
  const proto::Digest256 id = key_id(6);
  REQUIRE(a.tier->take_lease(id).take == remote::LeaseTake::won);
  const std::string taken = memory->value(lease_name(id)).value();
  std::this_thread::sleep_for(700ms);
  const auto now = memory->value(lease_name(id));
  REQUIRE(now.has_value());
  CHECK(written_expiry(*now) > written_expiry(taken));
  CHECK(a.tier->remote(0).lease_scripts_refused.load());
  CHECK(forbidden_errors(a.tier->remote(0).counters) == 1);  // once: not asked again
  CHECK(a.tier->remote(0).breaker.state() == remote::CircuitBreaker::State::closed);
  a.tier->release_lease(id);
  CHECK_FALSE(memory->value(lease_name(id)).has_value());
}
