// EXPORT_BUNDLE and IMPORT_BUNDLE (PROTOCOL.md §5), and the bundles of import_dir at start: what a
// caller may export and import, and the import's two passes over the file (docs/bundle-format.md,
// docs/security.md "Bundles").
//
// An import reads the file twice. The first pass checks everything (every length, frame, checksum,
// key as a PUT's, the signature) without touching the store, so a bad bundle never holds the
// store's writer, and copies the bytes it read into a private spool file (unlinked, in the state
// directory). The second pass reads that copy inside the store's one transaction and checks it all
// again, and commits only if its digest is the first pass's.
// Rationale: the caller's file could change between the passes, or sit on a file system whose
// reads the caller can stall (FUSE); the store's writer must never wait on the caller. Memory: one
// entry at a time; disk: the bundle once more, while it is imported.
//
// Who may do what: any caller may export what it can see (the shared namespace and its own). An
// import goes into the shared namespace only for a trusted caller or a bundle whose signature is by
// a trusted key (remote_trusted_keys, or this host's own remote_signing_key); into the caller's own
// namespace (ImportTarget::own) for anyone, within namespace_quota. One bundle operation at a time
// per uid; all of them run one after another on the server's bundle lane.
//
// Thread safety: export_bundle, import_bundle and import_file run on the bundle lane (or at start,
// before the server serves); try_begin and end from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <common/result.hpp>
#include <daemon/bundle/bundle_entry.hpp>
#include <daemon/policy/peer_credentials.hpp>
#include <daemon/policy/trust_policy.hpp>
#include <daemon/remote/record/trusted_keys.hpp>
#include <daemon/server/request_handler.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/entry_transfer.hpp>
#include <proto/bundle_messages.hpp>
#include <proto/signing.hpp>

namespace jitcache::daemon::server {

struct BundleSettings {
  bundle::ReaderLimits limits;
  std::string host;  // this host's name, for the bundles it writes
  // Where an import's private copy is made (O_TMPFILE); empty, or a file system without O_TMPFILE:
  // the second pass reads the caller's file again (its digest still has to match).
  std::string spool_dir;
};

class BundleService {
 public:
  // `signing_key`: this host's (remote_signing_key), or null: exports are unsigned. `trusted`: the
  // keys whose bundles may go into the shared namespace (with the host's own key among them).
  BundleService(store::EntryTransfer& transfer, stats::Counters& counters, policy::TrustPolicy trust,
                std::optional<proto::SigningKey> signing_key, remote::TrustedKeys trusted, BundleSettings settings);

  Reply export_bundle(proto::Bytes payload, const policy::PeerCredentials& peer, int fd);
  Reply import_bundle(proto::Bytes payload, const policy::PeerCredentials& peer, int fd);
  // The import itself: into the shared namespace (`target` shared: refused unless `caller_trusted`
  // or the signer is trusted) or `own_namespace`. Errors say which check failed, and at which entry.
  common::Result<proto::ImportBundleReply> import_file(int fd, proto::ImportTarget target, bool caller_trusted,
                                                       std::uint32_t own_namespace);

  // One bundle operation at a time per uid: false when `uid` has one running or waiting.
  bool try_begin(uid_t uid);
  void end(uid_t uid);

 private:
  bool signer_trusted(const bundle::BundleHeader& header) const;

  store::EntryTransfer& m_transfer;
  stats::Counters& m_counters;
  policy::TrustPolicy m_trust;
  std::optional<proto::SigningKey> m_signing_key;
  remote::TrustedKeys m_trusted;
  BundleSettings m_settings;
  std::mutex m_mutex;
  std::set<uid_t> m_busy;
};

}  // namespace jitcache::daemon::server
