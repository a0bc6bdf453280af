#include <daemon/remote/remote_check.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

#include <daemon/remote/remote_names.hpp>

namespace jitcache::daemon::remote {

namespace {

using common::ErrorCode;
using proto::LeaseSupport;
using proto::ProbeAnswer;

// Makes each probe's ids its own: two checks of one daemon at once must not read each other's value
// or find each other's lease.
std::atomic<std::uint64_t> g_probe_sequence{0};

proto::BreakerState wire_state(CircuitBreaker::State state) {
  switch (state) {
    case CircuitBreaker::State::closed: return proto::BreakerState::closed;
    case CircuitBreaker::State::open: return proto::BreakerState::open;
    case CircuitBreaker::State::half_open: return proto::BreakerState::half_open;
  }
  return proto::BreakerState::open;
}

// The host name as a probe id may carry it ([A-Za-z0-9._-]).
std::string id_text(std::string_view host) {
  std::string out(host);
  for (char& c : out) {
    const bool allowed =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!allowed) c = '_';
  }
  return out.empty() ? std::string("host") : out;
}

// "<step>: <the backend's message>", with what a refusal means at that step.
std::string describe(std::string_view step, const common::Error& error) {
  std::string text = std::string(step) + ": " + error.message;
  if (error.code == ErrorCode::forbidden) {
    text += step == "ping" ? " (the server refused the credentials: check the URL's user and remote_password_file)"
            : step.starts_with("lease ")
                ? " (the ACL lacks EVAL: leases are then renewed and released in two steps, which can touch "
                  "another host's lease; docs/remote-layout.md \"Commands\")"
                : " (the server refused the write: a read-only user or ACL, so this host cannot upload)";
  }
  return text;
}

void note_first(std::string& message, std::string text) {
  if (message.empty()) message = std::move(text);
}

// The write test: put, get and compare, remove. Every step is tried while the ones before worked;
// the first failure is the message.
ProbeAnswer probe_write(RemoteBackend& backend, std::string_view id, const std::string& value, Deadline deadline,
                        std::string& message) {
  const RemoteKey key{k_space_probe, id};
  if (auto put = backend.put(key, value, k_probe_ttl, deadline); !put) {
    note_first(message, describe("write", put.error()));
    return ProbeAnswer::no;
  }
  bool same = false;
  auto read = backend.get(key, value.size(), deadline);
  if (!read) {
    note_first(message, read.error().code == ErrorCode::too_large
                            ? "read back: the value read is not the one written (longer)"
                            : describe("read back", read.error()));
  } else if (!read->has_value()) {
    note_first(message, "read back: the value just written is not there (an eviction, or a proxy that drops writes)");
  } else if (**read != value) {
    note_first(message, "read back: the value read is not the one written");
  } else {
    same = true;
  }
  auto removed = backend.remove(key, deadline);
  if (!removed) note_first(message, describe("remove", removed.error()));
  return same && removed ? ProbeAnswer::yes : ProbeAnswer::no;
}

// The lease test: a conditional write (put_if_absent) on an id of its own, renewed and released as
// the tier does it (in one step where the backend can: a server that refuses that, an ACL without
// EVAL, is named here), then removed if still there.
LeaseSupport probe_lease(RemoteBackend& backend, std::string_view id, const std::string& value, Deadline deadline,
                         std::string& message) {
  const RemoteKey key{k_space_probe, id};
  auto taken = backend.put_if_absent(key, value, k_probe_ttl, deadline);
  if (!taken) {
    if (taken.error().code == ErrorCode::unsupported) return LeaseSupport::unsupported;
    note_first(message, describe("lease", taken.error()));
    return LeaseSupport::unknown;
  }
  // false (something was there) is a conditional write working too, though the id was fresh.
  bool released = false;
  if (*taken) {
    auto renewed = backend.renew_lease(key, value, value, k_probe_ttl, deadline);
    if (!renewed) {
      note_first(message, describe("lease renewal", renewed.error()));
    } else if (*renewed == LeaseChange::lost) {
      note_first(message, "lease renewal: the lease just taken was not there as written");
    }
    auto release = backend.release_lease(key, value, deadline);
    if (!release) note_first(message, describe("lease release", release.error()));
    released = release && *release == LeaseChange::done;
  }
  if (released) return LeaseSupport::supported;
  if (auto removed = backend.remove(key, deadline); !removed) note_first(message, describe("remove", removed.error()));
  return LeaseSupport::supported;
}

}  // namespace

proto::RemoteCheckRemote probe_remote(RemoteBackend& backend, std::string_view probe_id, bool writes,
                                      Deadline deadline) {
  proto::RemoteCheckRemote out;
  out.name = backend.name();
  const Clock::time_point start = Clock::now();
  auto pinged = backend.ping(deadline);
  const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  // At least 1: 0 means "not probed".
  out.latency_us = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(elapsed.count()));
  if (!pinged) {
    out.reachable = ProbeAnswer::no;
    out.message = describe("ping", pinged.error());
    return out;
  }
  out.reachable = ProbeAnswer::yes;
  if (!writes) return out;
  const std::string value = "jitcache remote check " + std::string(probe_id);
  out.writable = probe_write(backend, probe_id, value, deadline, out.message);
  out.leases = probe_lease(backend, std::string(probe_id) + ".lease", value, deadline, out.message);
  return out;
}

std::string signing_self_test(const proto::SigningKey& key, const TrustedKeys& trusted, bool configured) {
  const std::string signer = proto::signer_hex(key.public_key().id());
  const proto::PublicKey* found = trusted.find(key.public_key().id());
  if (found == nullptr) return "this host's key (signer " + signer + ") is not among the trusted keys";
  if (found->raw != key.public_key().raw) {
    return "the trusted key with this host's signer id " + signer + " is another key than remote_signing_key's";
  }
  const std::string message = "jitcache remote check: signing self-test of signer " + signer;
  if (!found->verifies(message, key.sign(message))) {
    return "a message signed with remote_signing_key does not verify with its public key (signer " + signer + ")";
  }
  if (!configured) {
    return "this host's key (signer " + signer +
           ") is not among remote_trusted_keys: hosts trusting those keys reject its uploads (is the .pub given to "
           "the fleet another key's? `openssl pkey -in <remote_signing_key> -pubout` prints this key's)";
  }
  return {};
}

proto::RemoteCheckReply check_remotes(const RemoteTier* tier, bool probe) {
  proto::RemoteCheckReply reply;
  if (tier == nullptr) return reply;
  const auto& signing = tier->signing_key();
  if (signing) {
    reply.signer = proto::signer_hex(signing->public_key().id());
    reply.signing_message = signing_self_test(*signing, tier->trusted(), tier->signer_configured());
  }
  for (const proto::PublicKey& key : tier->trusted().keys()) reply.trusted.push_back(proto::signer_hex(key.id()));

  const std::size_t count = std::min(tier->remote_count(), proto::k_max_remote_check_remotes);
  reply.remotes.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const RemoteEndpoint& remote = tier->remote(i);
    proto::RemoteCheckRemote& out = reply.remotes[i];
    out.name = remote.backend->name();
    out.breaker = wire_state(remote.breaker.state());
    if (remote.leases_unsupported.load(std::memory_order_relaxed)) out.leases = LeaseSupport::unsupported;
  }
  if (!probe) return reply;

  const std::string id_base = id_text(tier->settings().host) + "-" + std::to_string(::getpid()) + "-" +
                              std::to_string(g_probe_sequence.fetch_add(1, std::memory_order_relaxed));
  const bool writes = signing.has_value();
  const Deadline deadline = Clock::now() + k_probe_timeout;
  auto run = [&](std::size_t i) {
    const proto::RemoteCheckRemote known = reply.remotes[i];
    reply.remotes[i] = probe_remote(*tier->remote(i).backend, id_base + "-" + std::to_string(i), writes, deadline);
    reply.remotes[i].breaker = known.breaker;
    if (reply.remotes[i].leases == LeaseSupport::unknown) reply.remotes[i].leases = known.leases;
  };
  std::vector<std::thread> probes;
  for (std::size_t i = 0; i < count; ++i) {
    // A thread that cannot be started (the process is at its limit) probes here, one after another.
    try {
      probes.emplace_back(run, i);
    } catch (const std::system_error&) {
      run(i);
    }
  }
  for (std::thread& t : probes) t.join();
  return reply;
}

}  // namespace jitcache::daemon::remote
