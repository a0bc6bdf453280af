// EntryTransfer: entries leaving and entering the store whole, as a bundle carries them
// (docs/bundle-format.md): an export reads the entries a filter selects from one snapshot, each
// with its image as stored; an import writes many entries in ONE transaction, so a bundle that
// fails half-way leaves the store as it was. The bundle's format and checks are daemon/bundle/'s;
// this interface only moves entries (bundle::BundleEntry) in and out.
//
// Thread safety: both may be called from any thread and block on disk I/O for as long as the
// bundle takes: keep them off the server's accept loop and workers. An export reads on a
// connection of its own (it never holds one of the lookups' readers); an import holds the store's
// single writer for its transaction, so PUTs wait for it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <daemon/bundle/bundle_entry.hpp>
#include <daemon/store/store.hpp>
#include <proto/digest.hpp>

namespace jitcache::daemon::store {

struct ExportFilter {
  std::string arch;              // empty: any
  std::uint32_t driver_api = 0;  // 0: any
  std::string driver_build;      // empty: any
  std::int64_t since_ms = 0;     // entries created at or after; 0: any
  // Only these key ids (`jitcache export --keys FILE`); empty: all.
  std::vector<proto::Digest256> key_ids;
  // Only the shared namespace and `who.own_namespace`, whoever asks, trusted or not; of a key id in
  // both, the shared entry (the one a lookup serves). Quarantined entries never.
  Visibility who;
};

struct ImportCounts {
  std::uint64_t imported = 0;
  std::uint64_t skipped = 0;  // the key id was already in the namespace, or was removed (below)
  std::uint64_t removed = 0;  // of those skipped: an operator removed the key id from the shared namespace
};

// What the target namespace holds of a key id, as an import asks before it decodes an entry.
enum class KeyPresence {
  absent,
  present,  // an entry of the key id is in the namespace (quarantined or not): an import skips it
  removed,  // the shared namespace, and an operator removed the key id (REMOVE): an import skips it
};

struct ImportOptions {
  std::uint32_t namespace_id = k_shared_namespace;
  // What the entries will take, for eviction and the namespace quota beforehand, as a PUT makes
  // room (too_large when they could never fit).
  std::uint64_t stored_bytes = 0;
  // How many entries those bytes are: the namespace quota charges each its row overhead too, as a
  // PUT's does (namespace_quota.hpp), so many small entries cannot slip past the quota by import.
  std::uint64_t entry_count = 0;
  // Import an entry of a removed key id into the shared namespace after all, and forget its
  // removal: a trusted caller's `jitcache import --restore-removed`.
  bool restore_removed = false;
};

class EntryTransfer {
 public:
  virtual ~EntryTransfer() = default;

  // Calls `begin` once with how many entries the filter selects, then `each` for every one of them
  // in key id order, all from one read snapshot; an error of either ends the export with it. An
  // entry whose stored image fails its checksum is a corrupt error (VERIFY removes it).
  virtual Result<std::uint64_t> export_entries(const ExportFilter& filter,
                                               const std::function<Result<void>(std::uint64_t)>& begin,
                                               const std::function<Result<void>(const bundle::BundleEntry&)>& each) = 0;

  // A read, on a reader connection: whether `namespace_id` holds `key_id`, or (the shared
  // namespace) an operator removed it.
  virtual Result<KeyPresence> presence(std::uint32_t namespace_id, const proto::Digest256& key_id) = 0;

  // Writes into `options.namespace_id` every entry `next` yields until it yields nullopt, in one
  // transaction, committed only then: an error from `next` (or the store) rolls everything back. An
  // entry whose key id is already in the namespace is skipped and counted, not replaced; so is one
  // an operator removed from the shared namespace, unless options.restore_removed.
  // Rationale: `next` is called with the store's writer held, so it must only hand over entries
  // already checked (bundle_service.hpp reads them back from its private spool), never decode.
  virtual Result<ImportCounts> import_entries(
      const ImportOptions& options, const std::function<Result<std::optional<bundle::BundleEntry>>()>& next) = 0;
};

}  // namespace jitcache::daemon::store
