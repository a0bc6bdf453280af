// FleetGate: fleet-wide single flight (docs/operations.md "A fleet"). Before this host compiles a
// key it takes the key's lease in the remote (Redis SET NX PX; an HTTP server only where it
// honours If-None-Match). Won: compile, and the upload releases the lease once the entry is up.
// Held by another host: wait for that host's entry — polling the tiered store with backoff, up to
// lease_wait — and serve it without compiling; when the lease goes away without an entry (the
// holder failed, or died and its lease expired) take it and compile here. No remote can hold a
// lease (none configured, all down, HTTP only): compile at once, as without a fleet.
// A host without a signing key takes no leases (it could not upload what it compiled) but waits
// for a lease another host holds.
// Thread safety: as CompileGate.
#pragma once

#include <daemon/compile/compile_gate.hpp>
#include <daemon/remote/remote_tier.hpp>
#include <daemon/store/store.hpp>

namespace jitcache::daemon::remote {

class FleetGate final : public compile::CompileGate {
 public:
  // `serving`: the tiered store (a lookup there finds the holder's entry and stores it here).
  FleetGate(RemoteTier& tier, store::Store& serving) : m_tier(tier), m_serving(serving) {}

  std::optional<compile::CompileOutcome> before_compile(const proto::Digest256& key_id,
                                                        const std::atomic<bool>& stop) override;
  void after_compile(const proto::Digest256& key_id, const compile::CompileOutcome& outcome) override;

 private:
  // The entry, once a lookup finds it (locally or in a remote).
  std::optional<compile::CompileOutcome> look(const proto::Digest256& key_id);

  RemoteTier& m_tier;
  store::Store& m_serving;
};

}  // namespace jitcache::daemon::remote
