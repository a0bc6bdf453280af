// A lease's conditional changes on one remote (fleet-wide single flight, docs/remote-layout.md
// "Lease"): renewed or released only while the remote still holds this host's value, so that a
// lease that expired under a slow compile and was taken by another host is left alone. In one
// step where the backend can (Redis: a script, RemoteBackend::renew_lease); else, or where the
// server refuses the script (an ACL without EVAL: warned once), by reading, comparing and writing,
// which leaves the window docs/remote-layout.md "Lease" describes. Every call goes through the
// tier's circuit breaker and counters (RemoteTier::call).
// Thread safety: from any thread, as RemoteTier::call.
#pragma once

#include <string_view>

#include <common/result.hpp>

#include <daemon/remote/backend/remote_backend.hpp>
#include <daemon/remote/remote_tier.hpp>

namespace jitcache::daemon::remote {

// Replaces the lease of key id `id` (hex) by `renewed`, with the tier's lease_ttl, if it is `current`.
common::Result<LeaseChange> renew_lease_on(RemoteTier& tier, RemoteEndpoint& remote, std::string_view id,
                                           std::string_view current, std::string_view renewed, Deadline deadline);

// Removes the lease of key id `id` (hex) if it is `current`.
common::Result<LeaseChange> release_lease_on(RemoteTier& tier, RemoteEndpoint& remote, std::string_view id,
                                             std::string_view current, Deadline deadline);

}  // namespace jitcache::daemon::remote
