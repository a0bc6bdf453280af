// check_remotes (daemon/remote/remote_check.hpp), what REMOTE_CHECK answers, against in-memory
// remotes (tests/support/memory_backend.hpp) that a test can make refuse writes, fail or hang: the
// status without a network call, the probe's ping, write and lease tests, that the probe reaches a
// remote past an open breaker and leaves nothing behind, the signing self-test, and that hung remotes
// cost one deadline together. The same op runs against a real Redis in
// tests/integration/test_cli_remote_check.cpp.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <daemon/remote/remote_check.hpp>
#include <daemon/remote/remote_tier.hpp>
#include <tests/support/memory_backend.hpp>

namespace {

using namespace jitcache;
using namespace std::chrono_literals;
using jitcache::testing::MemoryBackend;
using proto::LeaseSupport;
using proto::ProbeAnswer;
namespace remote = jitcache::daemon::remote;

// A remote the test keeps a hand on after the tier took it: a MemoryBackend behind switches.
struct Switches {
  std::shared_ptr<MemoryBackend> memory = std::make_shared<MemoryBackend>();
  bool refuse_writes = false;  // put, put_if_absent and remove answer forbidden (a read-only ACL)
  bool hang = false;           // every call waits for its deadline and times out
  std::mutex mutex;
  std::vector<std::string> keys;  // "<space>/<id>" of every call that names a key
};

class SwitchedBackend final : public remote::RemoteBackend {
 public:
  explicit SwitchedBackend(std::shared_ptr<Switches> s, std::string name)
      : m_s(std::move(s)), m_name(std::move(name)) {}
  std::string name() const override { return m_name; }
  common::Result<std::optional<std::string>> get(remote::RemoteKey k, std::size_t max, remote::Deadline d) override {
    if (auto stop = gate(k, d, false)) return *stop;
    return m_s->memory->get(k, max, d);
  }
  common::Result<bool> exists(remote::RemoteKey k, remote::Deadline d) override {
    if (auto stop = gate(k, d, false)) return *stop;
    return m_s->memory->exists(k, d);
  }
  common::Result<void> put(remote::RemoteKey k, std::string_view v, std::chrono::milliseconds t,
                           remote::Deadline d) override {
    if (auto stop = gate(k, d, true)) return *stop;
    return m_s->memory->put(k, v, t, d);
  }
  common::Result<bool> put_if_absent(remote::RemoteKey k, std::string_view v, std::chrono::milliseconds t,
                                     remote::Deadline d) override {
    if (auto stop = gate(k, d, true)) return *stop;
    return m_s->memory->put_if_absent(k, v, t, d);
  }
  common::Result<void> remove(remote::RemoteKey k, remote::Deadline d) override {
    if (auto stop = gate(k, d, true)) return *stop;
    return m_s->memory->remove(k, d);
  }
  common::Result<void> ping(remote::Deadline d) override {
    if (auto stop = gate(std::nullopt, d, false)) return *stop;
    return m_s->memory->ping(d);
  }

 private:
  std::optional<common::Error> gate(std::optional<remote::RemoteKey> key, remote::Deadline deadline, bool write) {
    if (key) {
      std::lock_guard lock(m_s->mutex);
      m_s->keys.push_back(std::string(key->space) + "/" + std::string(key->id));
    }
    if (m_s->hang) {
      std::this_thread::sleep_until(deadline);
      return common::make_error(common::ErrorCode::timeout, "no answer by the deadline");
    }
    if (write && m_s->refuse_writes) {
      return common::make_error(common::ErrorCode::forbidden, "NOPERM this user has no permissions to run 'set'");
    }
    return std::nullopt;
  }
  std::shared_ptr<Switches> m_s;
  std::string m_name;
};

struct Fleet {
  std::vector<std::shared_ptr<Switches>> remotes;
  std::unique_ptr<remote::RemoteTier> tier;

  // `signs`: the host has a signing key; `configured`: its public key is among the trusted ones.
  explicit Fleet(std::size_t count, bool signs = true, bool configured = true) {
    std::vector<std::unique_ptr<remote::RemoteBackend>> backends;
    for (std::size_t i = 0; i < count; ++i) {
      remotes.push_back(std::make_shared<Switches>());
      backends.push_back(std::make_unique<SwitchedBackend>(remotes.back(), "memory://" + std::to_string(i)));
    }
    std::optional<proto::SigningKey> key;
    std::vector<proto::PublicKey> trusted{proto::SigningKey::generate().public_key()};
    if (signs) {
      key.emplace(proto::SigningKey::generate());
      if (configured) trusted.push_back(key->public_key());
    }
    remote::TierSettings settings;
    settings.host = "build host/7";  // a space and a slash: not of a probe id's characters
    tier = std::make_unique<remote::RemoteTier>(settings, std::move(backends), remote::TrustedKeys(trusted),
                                                std::move(key));
  }
};

}  // namespace

TEST_CASE("remote check: a daemon without remotes answers an empty reply") {
  for (bool probe : {false, true}) {
    const proto::RemoteCheckReply reply = remote::check_remotes(nullptr, probe);
    CHECK(reply.signer.empty());
    CHECK(reply.signing_message.empty());
    CHECK(reply.trusted.empty());
    CHECK(reply.remotes.empty());
  }
}

TEST_CASE("remote check: the status names every remote, its breaker and the keys, and calls no remote") {
  Fleet fleet(2);
  for (unsigned i = 0; i < remote::CircuitBreaker::k_failures_to_open; ++i) fleet.tier->remote(1).breaker.failed();
  const proto::RemoteCheckReply reply = remote::check_remotes(fleet.tier.get(), false);
  CHECK(reply.signer == proto::signer_hex(fleet.tier->signing_key()->public_key().id()));
  CHECK(reply.signing_message.empty());
  REQUIRE(reply.trusted.size() == 2);
  CHECK(reply.trusted[1] == reply.signer);
  REQUIRE(reply.remotes.size() == 2);
  CHECK(reply.remotes[0].name == "memory://0");
  CHECK(reply.remotes[0].breaker == proto::BreakerState::closed);
  CHECK(reply.remotes[1].breaker == proto::BreakerState::open);
  for (const auto& r : reply.remotes) {
    CHECK(r.reachable == ProbeAnswer::not_probed);
    CHECK(r.writable == ProbeAnswer::not_probed);
    CHECK(r.leases == LeaseSupport::unknown);
    CHECK(r.latency_us == 0);
  }
  CHECK(fleet.remotes[0]->memory->calls() == 0);
  CHECK(fleet.remotes[1]->memory->calls() == 0);
}

TEST_CASE(
    "remote check: a probe of a healthy remote finds it reachable, writable and able to hold leases, and "
    "leaves nothing behind") {
  Fleet fleet(1);
  const proto::RemoteCheckReply reply = remote::check_remotes(fleet.tier.get(), true);
  REQUIRE(reply.remotes.size() == 1);
  const auto& r = reply.remotes[0];
  INFO(r.message);
  CHECK(r.reachable == ProbeAnswer::yes);
  CHECK(r.writable == ProbeAnswer::yes);
  CHECK(r.leases == LeaseSupport::supported);
  CHECK(r.latency_us >= 1);
  CHECK(r.message.empty());
  CHECK(fleet.remotes[0]->memory->contents().empty());
  // Everything it wrote is under space "probe", with an id of [A-Za-z0-9._-] that names the host and
  // this process.
  const std::string id_start = "probe/build_host_7-" + std::to_string(::getpid()) + "-";
  REQUIRE(fleet.remotes[0]->keys.size() == 5);  // put, get, remove; put_if_absent, remove
  for (const std::string& key : fleet.remotes[0]->keys) {
    INFO(key);
    CHECK(key.rfind(id_start, 0) == 0);
  }
  CHECK(fleet.remotes[0]->keys[3] == fleet.remotes[0]->keys[0] + ".lease");
}

TEST_CASE("remote check: a host without a signing key only pings, and writes nothing") {
  Fleet fleet(1, /*signs=*/false);
  const proto::RemoteCheckReply reply = remote::check_remotes(fleet.tier.get(), true);
  CHECK(reply.signer.empty());
  CHECK(reply.signing_message.empty());
  REQUIRE(reply.remotes.size() == 1);
  CHECK(reply.remotes[0].reachable == ProbeAnswer::yes);
  CHECK(reply.remotes[0].writable == ProbeAnswer::not_probed);
  CHECK(reply.remotes[0].leases == LeaseSupport::unknown);
  CHECK(fleet.remotes[0]->keys.empty());
  CHECK(fleet.remotes[0]->memory->calls() == 1);
}

TEST_CASE("remote check: a probe reaches a remote whose circuit breaker is open, and leaves the breaker as it was") {
  Fleet fleet(1);
  for (unsigned i = 0; i < remote::CircuitBreaker::k_failures_to_open; ++i) fleet.tier->remote(0).breaker.failed();
  const proto::RemoteCheckReply reply = remote::check_remotes(fleet.tier.get(), true);
  REQUIRE(reply.remotes.size() == 1);
  CHECK(reply.remotes[0].breaker == proto::BreakerState::open);
  CHECK(reply.remotes[0].reachable == ProbeAnswer::yes);
  CHECK(reply.remotes[0].writable == ProbeAnswer::yes);
  CHECK(fleet.tier->remote(0).breaker.state() == remote::CircuitBreaker::State::open);
  CHECK(fleet.tier->remote(0).counters.skipped.load() == 0);
}

TEST_CASE("remote check: a remote that refuses connections is not reachable, and the message says why") {
  Fleet fleet(2);
  fleet.remotes[1]->memory->fail_next(-1, common::ErrorCode::unavailable);
  const proto::RemoteCheckReply reply = remote::check_remotes(fleet.tier.get(), true);
  REQUIRE(reply.remotes.size() == 2);
  CHECK(reply.remotes[0].reachable == ProbeAnswer::yes);
  CHECK(reply.remotes[1].reachable == ProbeAnswer::no);
  CHECK(reply.remotes[1].writable == ProbeAnswer::not_probed);
  CHECK(reply.remotes[1].message == "ping: injected failure");
  CHECK(fleet.remotes[1]->memory->calls() == 1);  // nothing after the failed ping
}

TEST_CASE("remote check: refused credentials are named as such") {
  Fleet fleet(1);
  fleet.remotes[0]->memory->fail_next(-1, common::ErrorCode::forbidden);
  const proto::RemoteCheckReply reply = remote::check_remotes(fleet.tier.get(), true);
  REQUIRE(reply.remotes.size() == 1);
  CHECK(reply.remotes[0].reachable == ProbeAnswer::no);
  CHECK_THAT(reply.remotes[0].message, Catch::StartsWith("ping: ") && Catch::Contains("refused the credentials"));
}

TEST_CASE("remote check: a read-only user is reachable but not writable, and the message says it cannot upload") {
  Fleet fleet(1);
  fleet.remotes[0]->refuse_writes = true;
  const proto::RemoteCheckReply reply = remote::check_remotes(fleet.tier.get(), true);
  REQUIRE(reply.remotes.size() == 1);
  const auto& r = reply.remotes[0];
  CHECK(r.reachable == ProbeAnswer::yes);
  CHECK(r.writable == ProbeAnswer::no);
  CHECK(r.leases == LeaseSupport::unknown);
  CHECK_THAT(r.message, Catch::StartsWith("write: NOPERM") && Catch::Contains("read-only user or ACL"));
}

TEST_CASE("remote check: a remote that cannot hold leases (a plain HTTP server) says unsupported, and is writable") {
  auto plain = std::make_shared<MemoryBackend>(/*expiring=*/false, /*leases=*/false);
  Fleet fleet(1);
  fleet.remotes[0]->memory = plain;
  const proto::RemoteCheckReply reply = remote::check_remotes(fleet.tier.get(), true);
  REQUIRE(reply.remotes.size() == 1);
  CHECK(reply.remotes[0].writable == ProbeAnswer::yes);
  CHECK(reply.remotes[0].leases == LeaseSupport::unsupported);
  CHECK(reply.remotes[0].message.empty());
  CHECK(plain->contents().empty());
  // Once the tier has found out by itself, the status says so too.
  fleet.tier->remote(0).leases_unsupported = true;
  CHECK(remote::check_remotes(fleet.tier.get(), false).remotes[0].leases == LeaseSupport::unsupported);
}

TEST_CASE("remote check: a value that does not read back as written is not writable") {
  // A remote that takes every write and answers every read with another value.
  struct Other final : remote::RemoteBackend {
    std::string name() const override { return "memory://other"; }
    common::Result<std::optional<std::string>> get(remote::RemoteKey, std::size_t, remote::Deadline) override {
      return std::optional<std::string>("something else");
    }
    common::Result<bool> exists(remote::RemoteKey, remote::Deadline) override { return false; }
    common::Result<void> put(remote::RemoteKey, std::string_view, std::chrono::milliseconds,
                             remote::Deadline) override {
      return {};
    }
    common::Result<bool> put_if_absent(remote::RemoteKey, std::string_view, std::chrono::milliseconds,
                                       remote::Deadline) override {
      return true;
    }
    common::Result<void> remove(remote::RemoteKey, remote::Deadline) override { return {}; }
    common::Result<void> ping(remote::Deadline) override { return {}; }
  };
  Other other;
  const proto::RemoteCheckRemote r = remote::probe_remote(other, "host-1-0-0", true, remote::Clock::now() + 1s);
  CHECK(r.reachable == ProbeAnswer::yes);
  CHECK(r.writable == ProbeAnswer::no);
  CHECK(r.leases == LeaseSupport::supported);
  CHECK(r.message == "read back: the value read is not the one written");
}

TEST_CASE("remote check: hung remotes are probed at once and cost one deadline together") {
  Fleet fleet(3);
  fleet.remotes[0]->hang = true;
  fleet.remotes[2]->hang = true;
  const auto start = std::chrono::steady_clock::now();
  const proto::RemoteCheckReply reply = remote::check_remotes(fleet.tier.get(), true);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(elapsed >= remote::k_probe_timeout - 50ms);
  CHECK(elapsed < remote::k_probe_timeout + 1500ms);  // not two deadlines one after the other
  REQUIRE(reply.remotes.size() == 3);
  CHECK(reply.remotes[0].reachable == ProbeAnswer::no);
  CHECK(reply.remotes[1].reachable == ProbeAnswer::yes);
  CHECK(reply.remotes[1].writable == ProbeAnswer::yes);
  CHECK(reply.remotes[2].reachable == ProbeAnswer::no);
  CHECK_THAT(reply.remotes[2].message, Catch::StartsWith("ping: no answer"));
}

TEST_CASE("remote check: the signing self-test fails when the host's key is not among the trusted keys it was given") {
  Fleet configured(1, true, true);
  CHECK(configured.tier->signer_configured());
  CHECK(remote::check_remotes(configured.tier.get(), false).signing_message.empty());

  Fleet unlisted(1, true, false);
  CHECK_FALSE(unlisted.tier->signer_configured());
  const proto::RemoteCheckReply reply = remote::check_remotes(unlisted.tier.get(), false);
  CHECK_THAT(reply.signing_message, Catch::Contains(reply.signer) && Catch::Contains("not among remote_trusted_keys"));
  // The tier trusts its own key anyway (it serves what it uploaded).
  CHECK(reply.trusted.size() == 2);

  // The self-test alone, on trusted keys without the host's (a tier always adds it).
  const proto::SigningKey key = proto::SigningKey::generate();
  const remote::TrustedKeys others(std::vector<proto::PublicKey>{proto::SigningKey::generate().public_key()});
  CHECK_THAT(remote::signing_self_test(key, others, true), Catch::Contains("not among the trusted keys"));
  CHECK(remote::signing_self_test(key, remote::TrustedKeys({key.public_key()}), true).empty());
}
