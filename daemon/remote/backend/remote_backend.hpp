// RemoteBackend: one remote server of the fleet tier (docs/remote-layout.md), seen as a small
// key-value store with deadlines: a Redis (standalone or Cluster, daemon/remote/redis/) or an HTTP
// cache server that takes GET/PUT/HEAD/DELETE on a URL (daemon/remote/http/). The tier above it
// (daemon/remote/) decides what is stored and checks everything it reads: a backend moves bytes and
// reports how it failed, nothing more, and trusts nothing the server says beyond that.
//
// Errors (common::Result), by what the tier counts and how the circuit breaker reacts:
//   ErrorCode::timeout      the deadline passed (connect, send or receive)
//   ErrorCode::unavailable  cannot connect (refused, unreachable, no route, DNS)
//   ErrorCode::forbidden    the server refused our credentials or the operation (Redis NOAUTH,
//                           WRONGPASS, NOPERM; HTTP 401/403)
//   ErrorCode::corrupt      the server answered something that is not its protocol (garbage,
//                           a truncated reply, a reply of the wrong type)
//   ErrorCode::io           the server answered an error of its own (Redis -ERR, HTTP 5xx), or a
//                           socket failed after connecting
//   ErrorCode::too_large    a value longer than the caller's max_bytes: not read further
//   ErrorCode::unsupported  the operation is not something this server can do (put_if_absent on an
//                           HTTP server that ignores If-None-Match: see put_if_absent)
// A backend never throws, and never blocks past the deadline it is given by more than the time
// one system call takes to return after its timeout.
//
// Thread safety: every method may be called from any number of threads at once. A backend keeps a
// bounded pool of connections (per server node); a call that cannot get one before its deadline
// fails with timeout, so a slow server cannot make the daemon hold more sockets than the pool.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <common/result.hpp>

namespace jitcache::daemon::remote {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// Where a value lives in the remote: a space ("idx", "fk", "img", "lease", "probe") and an id in
// it (lower-case hex digits, or [A-Za-z0-9._-] for "probe"). The backend maps it to its own name:
//   Redis:  <prefix><space>:{<id>}   the id is the Cluster hash tag, so "idx" and "lease" of one key
//                                    id share a slot (docs/remote-layout.md "Redis")
//   HTTP:   <url prefix>/<space>/<id>
struct RemoteKey {
  std::string_view space;
  std::string_view id;
};

// What a conditional change of a lease did (RemoteBackend::renew_lease, release_lease).
enum class LeaseChange : std::uint8_t {
  done,         // the lease held the caller's value and was changed: renewed, or removed
  lost,         // it did not (another host's now, or none at all): nothing was changed
  unsupported,  // the server cannot compare and change in one step (HTTP): nothing was sent
};

class RemoteBackend {
 public:
  virtual ~RemoteBackend() = default;

  // The remote as logs, STATS and `jitcache remote check` name it: its URL without password
  // ("redis://builder@10.0.0.5:6379/0", "redis+cluster://10.0.0.5:7000,…", "https://cache/jc").
  virtual std::string name() const = 0;

  // What this kind of backend counts about itself, as STATS names it after the tier's own figures
  // of the remote (PROTOCOL.md "STATS names of a remote": Redis's redirections and connections);
  // none by default.
  virtual std::vector<std::pair<std::string, std::uint64_t>> own_figures() const { return {}; }

  // The value under `key`, or nullopt when there is none. A value longer than max_bytes is
  // too_large, and no more of it is read than it takes to know (Redis: STRLEN first or the bulk
  // length; HTTP: Content-Length, or counting a chunked body).
  virtual common::Result<std::optional<std::string>> get(RemoteKey key, std::size_t max_bytes, Deadline deadline) = 0;

  // Whether a value is stored under `key` (Redis EXISTS, HTTP HEAD).
  virtual common::Result<bool> exists(RemoteKey key, Deadline deadline) = 0;

  // Stores `value` under `key`, replacing what was there; `ttl` 0 means it does not expire (the
  // server's own eviction policy still applies), otherwise the server drops it after ttl where it
  // can (Redis PX; an HTTP server has no expiry and ignores it).
  virtual common::Result<void> put(RemoteKey key, std::string_view value, std::chrono::milliseconds ttl,
                                   Deadline deadline) = 0;

  // Stores `value` only when nothing is stored under `key`: true when it was stored by this call,
  // false when a value was already there. The lease of fleet-wide single flight (Redis SET NX PX
  // with `ttl`; HTTP PUT with If-None-Match: *, 412 meaning false). An HTTP server cannot be asked
  // whether it honours If-None-Match, so the HTTP backend answers `unsupported` unless the URL asked
  // for leases (docs/operations.md "A fleet"); an HTTP lease never expires by itself: the tier
  // writes its expiry into the value and removes a stale one.
  virtual common::Result<bool> put_if_absent(RemoteKey key, std::string_view value, std::chrono::milliseconds ttl,
                                             Deadline deadline) = 0;

  // Removes the value under `key`; removing nothing is success.
  virtual common::Result<void> remove(RemoteKey key, Deadline deadline) = 0;

  // A lease of fleet-wide single flight, changed only while it is still the caller's: the value
  // under `key` is compared with `current` and changed in the same step, so a lease that expired
  // and was taken by another host just before is never overwritten or removed (Redis: EVAL of a
  // script of GET then SET or DEL; docs/remote-layout.md "Lease"). renew_lease stores `renewed`
  // with a fresh `ttl` (0: no expiry, as put); release_lease removes the lease. A backend that
  // cannot do it in one step keeps these: LeaseChange::unsupported, nothing sent, and the tier reads,
  // compares and writes in two calls instead (HTTP: docs/remote-layout.md "Leases" says what that
  // leaves open); so it does, from then on, after the error forbidden (a Redis ACL without EVAL) or
  // unsupported (a server without EVAL).
  virtual common::Result<LeaseChange> renew_lease(RemoteKey /*key*/, std::string_view /*current*/,
                                                  std::string_view /*renewed*/, std::chrono::milliseconds /*ttl*/,
                                                  Deadline /*deadline*/) {
    return LeaseChange::unsupported;
  }
  virtual common::Result<LeaseChange> release_lease(RemoteKey /*key*/, std::string_view /*current*/,
                                                    Deadline /*deadline*/) {
    return LeaseChange::unsupported;
  }

  // A bounded queue of short notes under `key` (the fleet's heal requests, docs/remote-layout.md
  // "Wants"): append adds `value` at the end and keeps the last `max_items` (Redis RPUSH, then LTRIM
  // when longer); take_first removes and returns the first (Redis LPOP), nullopt when empty. A
  // backend without queues (HTTP) answers `unsupported`, and the tier does without.
  virtual common::Result<void> append(RemoteKey /*key*/, std::string_view /*value*/, std::size_t /*max_items*/,
                                      Deadline /*deadline*/) {
    return common::make_error(common::ErrorCode::unsupported, name() + ": no queues");
  }
  virtual common::Result<std::optional<std::string>> take_first(RemoteKey /*key*/, std::size_t /*max_bytes*/,
                                                                Deadline /*deadline*/) {
    return common::make_error(common::ErrorCode::unsupported, name() + ": no queues");
  }
  // Whether append and take_first work here (Redis), asked before anything is written that only a
  // queue's reader would ever remove (a consumer's compile ask: an HTTP server would keep it).
  virtual bool keeps_queues() const { return false; }

  // One round trip that needs the credentials (Redis AUTH + PING on every node it knows; HTTP HEAD
  // of <url prefix>/probe/ping, where 404 is success: not of the prefix itself, which a file server
  // answers as a folder, nginx with 301, or 403 for "/"): reachability and authentication for
  // `jitcache remote check` and for the circuit breaker's probe.
  virtual common::Result<void> ping(Deadline deadline) = 0;
};

}  // namespace jitcache::daemon::remote
