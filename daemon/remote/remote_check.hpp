// What REMOTE_CHECK answers (proto/PROTOCOL.md §5 REMOTE_CHECK): `jitcache remote status` (what the
// daemon knows of its remotes now: each circuit breaker's state, the signing set-up) and `jitcache
// remote check` (each remote probed now: reachable with the configured credentials, writable with a
// probe value, able to hold leases). The probe goes to the backend directly, past the circuit
// breaker, since a check must reach a server whose breaker is open; it changes neither the breaker
// nor the counters, and leaves nothing behind in the remote but what a failed remove could not take
// back (under space "probe", expiring after 60 s where the remote expires values).
// Thread safety: any thread; a probe blocks on the network for at most k_probe_timeout (the remotes
// are probed at once, each on a thread of its own).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <proto/remote_check_messages.hpp>

#include <daemon/remote/backend/remote_backend.hpp>
#include <daemon/remote/remote_tier.hpp>

namespace jitcache::daemon::remote {

// Rationale: 2 s. A check is an operator's question, so it may wait far longer than remote_timeout
// (50 ms) lets a load, enough for a remote across a WAN and a TLS handshake; yet the probe runs on
// a worker thread of the daemon, whose other connections wait meanwhile, and well under systemd's
// watchdog (packaging/systemd/jitcached.service, WatchdogSec=30s). One deadline covers all of a
// remote's calls, and all remotes are probed at the same time.
inline constexpr std::chrono::milliseconds k_probe_timeout{2000};
// What a probe writes expires after this where the remote expires values (Redis).
inline constexpr std::chrono::milliseconds k_probe_ttl{60'000};

// `tier` null: a daemon without remotes (an empty reply). `probe` false: no network call.
proto::RemoteCheckReply check_remotes(const RemoteTier* tier, bool probe);

// One remote's probe, by `deadline`: ping; then, when `writes` (the host has a signing key), a value
// put under space "probe", id `probe_id`, read back, compared and removed, and a lease taken on
// id `probe_id` + ".lease" (put_if_absent) and removed. `probe_id` is of [A-Za-z0-9._-].
proto::RemoteCheckRemote probe_remote(RemoteBackend& backend, std::string_view probe_id, bool writes,
                                      Deadline deadline);

// The signing set-up's self-test: a message signed with `key` verifies with the trusted key of its
// signer id, and that key was among the configured ones (`configured`: RemoteTier::
// signer_configured; a builder whose .pub is not its key's uploads what no other host accepts).
// Empty when it passes, else what is wrong.
std::string signing_self_test(const proto::SigningKey& key, const TrustedKeys& trusted, bool configured);

}  // namespace jitcache::daemon::remote
