// EXPORT_BUNDLE and IMPORT_BUNDLE (PROTOCOL.md §5), and the bundles of import_dir at start: what a
// caller may export and import, and the import's two passes over the file (docs/bundle-format.md,
// docs/security.md "Bundles").
//
// An import reads the caller's file once, holding no lock: it checks everything (every length,
// frame, key as a PUT's, the digest and the signature), decodes and checks only the images of the
// entries it will import (not one already present, removed, or met before in the bundle), within
// bundle_max_decoded and the uid's bundle_decoded_per_uid, and appends their records to a private
// spool (private_spool.hpp), granted before the first byte (spool_budget.hpp). Then, inside the
// store's one transaction, it reads the spool back and inserts: parsing, no decoding, no hashing.
// Rationale: the caller's file could change, or sit on a file system whose reads the caller can
// stall (FUSE), and a bundle's frames can decode to 1000 times their size; the store's writer must
// never wait on either. Memory: one entry at a time; disk: the entries to import once more.
//
// Who may do what: any caller may export what it can see (the shared namespace and its own); each
// entry says which of the two it came from, under the signature. An import goes into the shared
// namespace only for a trusted caller, or a bundle whose signature is by a trusted key
// (remote_trusted_keys, or this host's own remote_signing_key) and whose every entry came from its
// signer's shared namespace; into the caller's own namespace (ImportTarget::own) for anyone, within
// namespace_quota. An import into the shared namespace skips what an operator removed from it.
// One bundle operation at a time per uid, each on a thread of the server's bundle lane (the op
// table's limits for EXPORT_BUNDLE and IMPORT_BUNDLE, daemon/ops/op_table.cpp).
//
// An export writes the bundle into a private spool under the store's read snapshot, and copies it
// to the caller's file (a regular file on disk, or a pipe; never a memory-backed file) only once the
// snapshot has ended.
//
// Thread safety: export_bundle, import_bundle and import_file run on the bundle lane (or at start,
// before the server serves).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <common/result.hpp>
#include <daemon/bundle/bundle_entry.hpp>
#include <daemon/ops/decode_budget.hpp>
#include <daemon/ops/reply.hpp>
#include <daemon/ops/spool_budget.hpp>
#include <daemon/policy/peer_credentials.hpp>
#include <daemon/policy/trust_policy.hpp>
#include <daemon/remote/record/trusted_keys.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/entry_transfer.hpp>
#include <proto/bundle_messages.hpp>
#include <proto/signing.hpp>

namespace jitcache::daemon::ops {

// Bundle operations running at once, each on a thread of the server's bundle lane (which has this
// many): one uid's operation whose file stalls holds its own thread, never another uid's. The op
// table admits at most this many (daemon/ops/op_table.cpp).
inline constexpr std::size_t k_max_bundle_operations = 8;

struct BundleSettings {
  bundle::ReaderLimits limits;
  std::string host;  // this host's name, for the bundles it writes
  // Where the private spools are made (private_spool.hpp): the state directory.
  std::string spool_dir;
  // Free space the spools leave on spool_dir's disk (bundle_spool_reserve).
  std::uint64_t spool_reserve = 1ull << 30;
  // The raw bytes one import may decode (bundle_max_decoded), and an untrusted uid an hour
  // (bundle_decoded_per_uid; 0: no limit).
  std::uint64_t max_decoded_bytes = 4ull << 30;
  std::uint64_t decoded_per_uid = 16ull << 30;
  // An untrusted caller's bundle is at most this (its spool is its cost); 0: no limit.
  std::uint64_t namespace_quota = 0;
};

// Who asks for an import.
struct ImportCaller {
  bool trusted = false;   // root, the daemon's uid, trusted_users, trusted_groups
  std::uint32_t uid = 0;  // its own namespace
  bool limited = true;    // an untrusted uid's request: its quota bounds the spool, its hour's decoding is counted
};

class BundleService {
 public:
  // `signing_key`: this host's (remote_signing_key), or null: exports are unsigned. `trusted`: the
  // keys whose bundles may go into the shared namespace (with the host's own key among them).
  BundleService(store::EntryTransfer& transfer, stats::Counters& counters, policy::TrustPolicy trust,
                std::optional<proto::SigningKey> signing_key, remote::TrustedKeys trusted, BundleSettings settings);

  Reply export_bundle(proto::Bytes payload, const policy::PeerCredentials& peer, int fd);
  Reply import_bundle(proto::Bytes payload, const policy::PeerCredentials& peer, int fd);
  // The import itself: into the shared namespace (`target` shared: refused unless the caller is
  // trusted or the signer is, and then every entry must be one the signer's host had shared) or
  // the caller's own. Errors say which check failed, and at which entry.
  common::Result<proto::ImportBundleReply> import_file(int fd, proto::ImportTarget target, const ImportCaller& caller);

 private:
  bool signer_trusted(const bundle::BundleHeader& header) const;

  store::EntryTransfer& m_transfer;
  stats::Counters& m_counters;
  policy::TrustPolicy m_trust;
  std::optional<proto::SigningKey> m_signing_key;
  remote::TrustedKeys m_trusted;
  BundleSettings m_settings;
  SpoolBudget m_spool_budget;
  DecodeBudget m_decode_budget;
};

}  // namespace jitcache::daemon::ops
