// FleetGate: fleet-wide single flight (docs/operations.md "A fleet", docs/remote-layout.md "Lease").
// Before this host compiles a key it asks the fleet whether another host compiles it:
//   - A builder (it has a signing key) takes the key's lease (Redis SET NX PX; an HTTP server only
//     where it honours If-None-Match). Won: it compiles, and the upload releases the lease once the
//     entry is up. Held: it waits for the holder's entry; when the lease goes away without one (the
//     holder failed, or died and its lease expired) it tries to take it again.
//   - A consumer (no signing key: it could not upload what it compiled) takes no lease. A lease held
//     by another host: it waits for that host's entry. No lease, but a builder is up (the "builders"
//     value, docs/remote-layout.md "Builders"): it asks the builders to compile the key for it
//     (ask_desk.hpp: the first consumer of a herd asks, the others find it asked) and waits up to
//     builder_wait for a builder's lease or entry to appear, so that a herd of consumers alone, or
//     one whose builder arrives last, still costs one compile. No builder up, or none came: it
//     compiles for itself (once per host: the compile service's own single flight).
//   - A builder that holds the key's lease already (taken for a consumer's ask before this compile
//     started) compiles under it.
// Unknown is not gone: a lease call that timed out, or a breaker that is open, is asked again with a
// backoff, until a held lease's own expiry (a waiter), or for k_unknown_patience (no lease seen yet);
// only then does the host compile without the fleet. No remote can hold a lease (none configured,
// HTTP only): compile at once, as without a fleet.
// Thread safety: as CompileGate.
#pragma once

#include <daemon/compile/compile_gate.hpp>
#include <daemon/remote/ask_desk.hpp>
#include <daemon/remote/remote_tier.hpp>
#include <daemon/store/store.hpp>

namespace jitcache::daemon::remote {

class FleetGate final : public compile::CompileGate {
 public:
  // `serving`: the tiered store (a lookup there finds the holder's entry and stores it here);
  // `asks`: where a consumer asks builders to compile for it (none: it does not ask).
  FleetGate(RemoteTier& tier, store::Store& serving, AskDesk* asks = nullptr)
      : m_tier(tier), m_serving(serving), m_asks(asks) {}

  std::optional<compile::CompileOutcome> before_compile(const compile::GateSubject& subject,
                                                        const std::atomic<bool>& stop) override;
  void after_compile(const proto::Digest256& key_id, const compile::CompileOutcome& outcome) override;

 private:
  enum class Waited : std::uint8_t { found, gone, given_up, ours };

  // The entry, once a lookup finds it (locally or in a remote).
  std::optional<compile::CompileOutcome> look(const proto::Digest256& key_id);
  // Waits while another host holds the key's lease (its expires_at_ms `expiry_ms`, 0 unknown):
  // found (the entry is in `found`), gone (the lease is free, or unknown past its expiry, and there is
  // no entry), given_up (`until` passed, or `stop`), ours (the lease is this host's: taken for an ask).
  Waited wait_for_holder(const proto::Digest256& key_id, std::int64_t expiry_ms, Clock::time_point until,
                         const std::atomic<bool>& stop, std::optional<compile::CompileOutcome>& found);

  // This host holds the key's lease: the entry if it is there already (the lease then released),
  // else nullopt (compile under it).
  std::optional<compile::CompileOutcome> under_own_lease(const proto::Digest256& key_id);

  RemoteTier& m_tier;
  store::Store& m_serving;
  AskDesk* m_asks;
};

}  // namespace jitcache::daemon::remote
