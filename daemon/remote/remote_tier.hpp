// RemoteTier: the fleet's remotes as the daemon uses them (docs/operations.md "A fleet",
// docs/remote-layout.md). It finds entries (fetch: record, signature and key checks, image checks,
// all within remote_timeout), sends this host's compiles up (upload: signed, queued, drained by one
// thread), and keeps fleet-wide single flight's leases. Every remote call goes through the remote's
// circuit breaker and is counted (remote_counters.hpp); nothing a remote answers is trusted before
// it passed the checks of daemon/remote/record/.
//
// Which remote: fetch tries them in the configured order until one serves the entry; uploads go
// to every remote; leases live on the first remote that can hold one (a plain HTTP server cannot),
// and every host of a fleet, configured alike, picks the same one.
//
// Thread safety: every method may be called from any thread. fetch and the lease calls block on
// the network, bounded by the settings' timeouts.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <proto/digest.hpp>
#include <proto/signing.hpp>

#include <daemon/remote/backend/remote_backend.hpp>
#include <daemon/remote/circuit_breaker.hpp>
#include <daemon/remote/record/index_record.hpp>
#include <daemon/remote/record/trusted_keys.hpp>
#include <daemon/remote/rejection_log.hpp>
#include <daemon/remote/remote_counters.hpp>
#include <daemon/remote/tier_settings.hpp>
#include <daemon/remote/upload_queue.hpp>

namespace jitcache::daemon::remote {

// One configured remote and what the daemon knows of it.
struct RemoteEndpoint {
  explicit RemoteEndpoint(std::unique_ptr<RemoteBackend> b) : backend(std::move(b)) {}
  std::unique_ptr<RemoteBackend> backend;
  CircuitBreaker breaker;
  RemoteCounters counters;
  std::atomic<bool> leases_unsupported{false};  // put_if_absent answered `unsupported` once
  // The server refused the one-step lease changes (an ACL without EVAL, or no EVAL at all): leases
  // are renewed and released in two steps from then on (lease_change.hpp).
  std::atomic<bool> lease_scripts_refused{false};
};

// An entry found in a remote, checked.
struct Fetched {
  IndexRecord record;
  std::vector<std::uint8_t> image;
  std::size_t remote = 0;  // which one served it
};

enum class LeaseTake : std::uint8_t {
  won,             // this host holds the key's lease: compile, upload, then release
  held_elsewhere,  // another host compiles it: wait for its entry
  unavailable,     // no remote can hold a lease (none configured, HTTP only): compile without one
  unknown,         // the remote did not answer in time, or its breaker is open: ask again later
};

struct LeaseAnswer {
  LeaseTake take = LeaseTake::unavailable;
  std::size_t remote = 0;      // where the lease is (won, held_elsewhere)
  std::int64_t expiry_ms = 0;  // held_elsewhere: the holder's expires_at_ms (0: not readable)
};

// What a look at a key's lease saw (RemoteTier::lease_state).
enum class LeaseSeen : std::uint8_t { held, free, unknown };
struct LeaseState {
  LeaseSeen seen = LeaseSeen::unknown;
  std::size_t remote = 0;      // held: where
  std::int64_t expiry_ms = 0;  // held: its expires_at_ms (0: not readable)
};

class RemoteTier {
 public:
  // `trusted`: the keys whose records are served (this host's own public key is added when it
  // signs). `signing`: this host's key; without one nothing is uploaded and no lease is taken.
  RemoteTier(TierSettings settings, std::vector<std::unique_ptr<RemoteBackend>> backends, TrustedKeys trusted,
             std::optional<proto::SigningKey> signing);
  ~RemoteTier();  // stops the upload thread; what is still queued is dropped (counted)
  RemoteTier(const RemoteTier&) = delete;
  RemoteTier& operator=(const RemoteTier&) = delete;

  // The entry `expected` names, from the first remote that has one that passes every check
  // (docs/remote-layout.md "Checks on read"); nullopt when none does by the remote_timeout
  // deadline. Rejections are counted per remote and reason and logged once per key.
  std::optional<Fetched> fetch(const ExpectedKey& expected);

  // Whether this host uploads (it has a signing key) and takes leases.
  bool uploads() const { return m_signing.has_value() && !m_remotes.empty(); }
  // Queues an entry for every remote; an upload that does not fit is dropped and counted.
  void upload(Upload item);
  // How many uploads are queued now.
  std::size_t uploads_queued() const { return m_queue.size(); }

  // Fleet-wide single flight (fleet_gate.hpp). One try: a remote that does not answer within
  // lease_call_timeout() is `unknown`, never taken as "no lease" (the caller asks again).
  LeaseAnswer take_lease(const proto::Digest256& key_id);
  // Whether some host holds the key's lease now: held, free, or unknown (a remote did not answer).
  LeaseState lease_state(const proto::Digest256& key_id);
  // The remote where some host holds the key's lease now; nullopt when none does (or none can say).
  std::optional<std::size_t> lease_held(const proto::Digest256& key_id);
  // Whether a builder announced itself within the last lease_ttl (docs/remote-layout.md "Builders"):
  // nullopt when no remote that holds leases answered.
  std::optional<bool> builder_alive();
  // How long one lease call may wait for its remote: a paused or loaded Redis is waited for, not
  // taken as gone. Compile threads make these calls, never a thread that serves hits.
  std::chrono::milliseconds lease_call_timeout() const;
  // Gives back the key's lease if this host holds it (after its upload, or a failed compile).
  void release_lease(const proto::Digest256& key_id);
  // Whether this host holds the key's lease (taken for a consumer's ask before its compile started:
  // ask_desk.hpp). No network call.
  bool holds_lease(const proto::Digest256& key_id);

  // The PTX a record's key was compiled from, checked against the key's content digest (the
  // sampled re-verification: verify_sampler.hpp). nullopt when no remote has it.
  std::optional<std::vector<std::uint8_t>> fetch_source(const proto::Digest256& content, std::size_t remote);

  std::size_t remote_count() const { return m_remotes.size(); }
  RemoteEndpoint& remote(std::size_t i) { return *m_remotes[i]; }
  const RemoteEndpoint& remote(std::size_t i) const { return *m_remotes[i]; }
  const TierSettings& settings() const { return m_settings; }
  const std::optional<proto::SigningKey>& signing_key() const { return m_signing; }
  const TrustedKeys& trusted() const { return m_trusted; }
  // Whether this host's own public key was among the trusted keys it was given. When it was not, the
  // tier trusts it all the same (this host serves what it uploaded), but hosts configured with the
  // same keys reject this host's uploads: `jitcache remote check` says so.
  bool signer_configured() const { return m_signer_configured; }

  // A backend call through the remote's breaker, timed and counted: an error the breaker skipped
  // is ErrorCode::unavailable with a message saying so.
  template <class T, class Call>
  common::Result<T> call(RemoteEndpoint& remote, Call&& call);

 private:
  void upload_loop();
  void renew_loop();
  void renew_leases();
  void announce_builder();
  void upload_to(RemoteEndpoint& remote, const Upload& upload, const std::string& record,
                 const std::string& image_object, const std::string& source_object);
  std::string lease_value() const;

  TierSettings m_settings;
  std::vector<std::unique_ptr<RemoteEndpoint>> m_remotes;
  TrustedKeys m_trusted;
  std::optional<proto::SigningKey> m_signing;
  bool m_signer_configured = false;
  RejectionLog m_rejection_log;
  UploadQueue m_queue;
  std::mutex m_leases_mutex;
  std::map<proto::Digest256, std::pair<std::size_t, std::string>> m_held_leases;  // remote, value
  std::condition_variable m_renew_wake;
  bool m_stopping = false;  // under m_leases_mutex
  std::thread m_uploader;
  std::thread m_renewer;
};

// What call() does around a backend call, out of line.
bool admit_call(RemoteEndpoint& remote);
void note_call(RemoteEndpoint& remote, Clock::time_point start, const common::Error* error);

template <class T, class Call>
common::Result<T> RemoteTier::call(RemoteEndpoint& remote, Call&& call) {
  if (!admit_call(remote)) {
    return common::make_error(common::ErrorCode::unavailable,
                              remote.backend->name() + ": skipped while its circuit breaker is open");
  }
  const Clock::time_point start = Clock::now();
  common::Result<T> result = call(*remote.backend);
  note_call(remote, start, result ? nullptr : &result.error());
  return result;
}

}  // namespace jitcache::daemon::remote
