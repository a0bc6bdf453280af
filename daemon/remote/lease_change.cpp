#include <daemon/remote/lease_change.hpp>

#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include <daemon/remote/remote_names.hpp>

namespace jitcache::daemon::remote {

namespace {

// A lease value is "host pid expires_at_ms" (docs/remote-layout.md "Lease"): far under this.
constexpr std::size_t k_max_lease_bytes = 256;

// The backend's one-step change, or nullopt when this remote needs the two-step one: the backend
// cannot (LeaseChange::unsupported: HTTP), or the server refused it (forbidden: the ACL lacks EVAL;
// the error unsupported: a server without EVAL). A refusal is not asked again: a builder whose ACL
// predates the scripts keeps its leases (and its breaker closed) rather than failing every renewal.
template <class Change>
std::optional<common::Result<LeaseChange>> in_one_step(RemoteTier& tier, RemoteEndpoint& remote, Change&& change) {
  if (remote.lease_scripts_refused.load(std::memory_order_relaxed)) return std::nullopt;
  auto changed = tier.call<LeaseChange>(remote, std::forward<Change>(change));
  if (changed && *changed == LeaseChange::unsupported) return std::nullopt;
  const bool refused = !changed && (changed.error().code == common::ErrorCode::forbidden ||
                                    changed.error().code == common::ErrorCode::unsupported);
  if (!refused) return changed;
  if (!remote.lease_scripts_refused.exchange(true)) {
    spdlog::warn(
        "remote {}: {}: leases are renewed and released by a read and a write from now on, which can "
        "overwrite or remove another host's lease taken in between; allow EVAL to this host's user "
        "(docs/remote-layout.md \"Commands\")",
        remote.backend->name(), changed.error().message);
  }
  return std::nullopt;
}

// Whether the lease under `key` is `current` now (the first of the two steps).
common::Result<bool> still_ours(RemoteTier& tier, RemoteEndpoint& remote, RemoteKey key, std::string_view current,
                                Deadline deadline) {
  JITCACHE_TRY_ASSIGN(const auto holder, tier.call<std::optional<std::string>>(remote, [&](RemoteBackend& b) {
    return b.get(key, k_max_lease_bytes, deadline);
  }));
  return holder.has_value() && *holder == current;
}

}  // namespace

common::Result<LeaseChange> renew_lease_on(RemoteTier& tier, RemoteEndpoint& remote, std::string_view id,
                                           std::string_view current, std::string_view renewed, Deadline deadline) {
  const RemoteKey key{k_space_lease, id};
  const auto ttl = tier.settings().lease_ttl;
  if (auto changed = in_one_step(tier, remote, [&](RemoteBackend& b) {
        return b.renew_lease(key, current, renewed, ttl, deadline);
      })) {
    return std::move(*changed);
  }
  // Two steps: a lease that expires between them and is taken meanwhile is overwritten.
  JITCACHE_TRY_ASSIGN(const bool ours, still_ours(tier, remote, key, current, deadline));
  if (!ours) return LeaseChange::lost;
  JITCACHE_TRY(tier.call<void>(remote, [&](RemoteBackend& b) { return b.put(key, renewed, ttl, deadline); }));
  return LeaseChange::done;
}

common::Result<LeaseChange> release_lease_on(RemoteTier& tier, RemoteEndpoint& remote, std::string_view id,
                                             std::string_view current, Deadline deadline) {
  const RemoteKey key{k_space_lease, id};
  if (auto changed =
          in_one_step(tier, remote, [&](RemoteBackend& b) { return b.release_lease(key, current, deadline); })) {
    return std::move(*changed);
  }
  // Two steps: a lease that expires between them and is taken meanwhile is removed.
  JITCACHE_TRY_ASSIGN(const bool ours, still_ours(tier, remote, key, current, deadline));
  if (!ours) return LeaseChange::lost;
  JITCACHE_TRY(tier.call<void>(remote, [&](RemoteBackend& b) { return b.remove(key, deadline); }));
  return LeaseChange::done;
}

}  // namespace jitcache::daemon::remote
