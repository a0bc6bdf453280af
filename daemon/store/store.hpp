// Store: the daemon's persistent map from (key id, namespace) to a compiled image and its metadata.
//
// Thread safety: every method may be called from any thread at any time. Implementations serialise
// writes on one writer and serve reads from a pool, so reads never wait for each other; the server
// still keeps all store calls off its accept loop (daemon/server/). A miss is not an error: lookups
// return "found / not found / failed" as Result<std::optional<...>>.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <jitcache/proto/digest.hpp>
#include <jitcache/proto/key.hpp>
#include <jitcache/proto/messages.hpp>
#include <jitcache/proto/result.hpp>

#include <daemon/store/image_buffer.hpp>
#include <daemon/store/image_codec.hpp>

namespace jitcache::daemon::store {

using proto::Result;

inline constexpr std::uint32_t k_shared_namespace = 0;

// Which namespaces a caller can see and touch (docs/security.md "What is enforced"). Lookups see
// the shared namespace and the caller's own, shared first, except shared entries the caller has
// reported failing (report_failure). A trusted caller lists and removes in every namespace.
struct Visibility {
  std::uint32_t own_namespace = k_shared_namespace;
  bool trusted = false;
};

struct PutInput {
  proto::KeyFields key;            // already validated by the caller (proto::validate_key)
  std::uint32_t namespace_id = k_shared_namespace;
  std::string producer;
  std::uint64_t compile_time_us = 0;
  proto::Bytes image;              // raw image bytes; must stay valid for the duration of put()
                                   // (the store compresses them itself: image_codec.hpp)
  // The writer's XXH3-128 of the source (PUT's content_fast): indexes the entry for lookup_fast().
  // Absent: a replaced entry keeps the one it had (same key id, so the same source).
  std::optional<proto::Checksum128> content_fast;
};

struct PutOutcome {
  proto::Digest256 key_id;
  bool replaced = false;
  std::int64_t row_id = 0;  // the row now holding the entry (see RowDropped)
};

// An image whose checksum was verified against the stored XXH3-128 after it was read (or when it
// entered the store's hot image cache). The buffer may be shared with that cache: never modify it.
struct StoredImage {
  proto::EntryInfo info;
  std::shared_ptr<const ImageBuffer> image;  // raw bytes, info.raw_size long
  std::int64_t row_id = 0;                   // the row it was read from (see RowDropped)
};

// Told the id of every row a write replaces or deletes (a PUT over an entry, REMOVE, a quarantine,
// a corrupt entry deleted, eviction), after the write commits and before the next write can start.
// A row id names one (key id, namespace) at a time; whoever keeps copies of entries by row id (the
// published images, daemon/publish/) drops them here.
using RowDropped = std::function<void(std::int64_t row_id)>;
// Told instead of a row id when every row is gone at once: a corrupt database was set aside and
// replaced by an empty one (RecoveringStore), so row ids start again and name other entries.
inline constexpr std::int64_t k_every_row = -1;

struct ListQuery {
  std::string arch;                 // empty: any
  std::uint32_t driver_api = 0;     // 0: any
  std::string driver_build;         // empty: any
  std::optional<std::uint32_t> namespace_id;  // only this namespace (still within visibility)
  std::string key_id_prefix;        // empty or hex
  std::uint32_t limit = 100;        // 1..proto::k_max_list_limit
  std::string cursor;               // "" or a next_cursor from a previous page
  // Only entries of a driver no client has asked for within stale_driver_after: the ones eviction
  // takes first (LIST's trailing stale_only, `jitcache ls --stale`).
  bool stale_only = false;
};

struct ListPage {
  std::vector<proto::EntryInfo> entries;
  std::string next_cursor;  // empty: no more
};

struct Totals {
  std::uint64_t entries = 0;
  std::uint64_t bytes_raw = 0;
  std::uint64_t bytes_stored = 0;
  std::uint64_t entries_quarantined = 0;  // now, in every namespace
  std::uint64_t corrupt_entries = 0;  // removed since open because their checksum failed
  // The in-memory cache of recently served images (SqliteStore: hot_image_cache.hpp); all 0 for a
  // store without one. Hits and misses count lookups of live entries since open.
  std::uint64_t hot_cache_hits = 0;
  std::uint64_t hot_cache_misses = 0;
  std::uint64_t hot_cache_bytes = 0;
  std::uint64_t hot_cache_entries = 0;
  // Capacity (eviction.hpp): the limit, and what eviction (by PUTs and GC) removed since open.
  std::uint64_t max_size = 0;  // 0: no limit
  std::uint64_t evictions = 0;
  std::uint64_t evicted_bytes = 0;  // stored bytes
  // Entries evicted from an untrusted uid's namespace to keep it within namespace_quota (not
  // counted in evictions, which are the store-wide limit's).
  std::uint64_t quota_evictions = 0;
  // Times the database was found corrupt while the daemon ran, set aside and replaced by an empty
  // one (recovering_store.hpp); the counters above then carry on across the new database.
  std::uint64_t store_resets = 0;
  // Times the database's files were deleted or replaced under the running daemon, noticed and the
  // store reopened on the file now at its path (recovering_store.hpp); counted apart from
  // store_resets, which are corruption.
  std::uint64_t store_reopens = 0;
  // Usage kept in memory for the next flush (hit counts of entries, uses of drivers), and the
  // records dropped since open because that was full (usage_log.hpp, driver_log.hpp).
  std::uint64_t usage_pending = 0;
  std::uint64_t usage_dropped = 0;
};

// Why a lookup by key found nothing to serve (lookup_explained), for the metrics endpoint.
enum class MissReason {
  not_found,    // no entry of the key in a namespace the caller sees
  quarantined,  // only quarantined ones (report_failure)
  corrupt,      // the entry's image failed its checksum: it was deleted (Totals::corrupt_entries)
};

// Entries and stored bytes of one namespace (k_shared_namespace, or a uid).
struct NamespaceUsage {
  std::uint32_t namespace_id = k_shared_namespace;
  std::uint64_t entries = 0;
  std::uint64_t bytes_stored = 0;
};

// The namespaces that hold entries, bounded for the metrics endpoint: the shared one (always, even
// empty) and the `top` largest others by stored bytes; the rest summed in `other`.
struct NamespaceTotals {
  std::vector<NamespaceUsage> largest;  // shared first, then by bytes_stored, largest first
  NamespaceUsage other;                 // namespace_id unused
  std::uint64_t other_namespaces = 0;   // how many namespaces `other` sums
};

// What a GC removed, and the store afterwards.
struct GcOutcome {
  std::uint64_t evicted_entries = 0;
  std::uint64_t evicted_bytes = 0;  // stored bytes
  std::uint64_t stale_entries = 0;  // of the evicted, those of a driver no client asks for any more
  std::uint64_t entries = 0;        // left
  std::uint64_t bytes_stored = 0;   // left
};

// One page of a full check of the stored images (VERIFY, verify.hpp): entries with id > after_id in
// id order, each image decoded and checked against its checksum; a bad one is deleted, counted in
// Totals::corrupt_entries and logged, as a lookup would.
struct RemovedEntry {
  proto::Digest256 key_id;
  std::uint32_t namespace_id = k_shared_namespace;
};
struct VerifyBatch {
  std::uint64_t checked = 0;
  std::vector<RemovedEntry> removed;
  std::int64_t last_id = 0;  // pass as after_id for the next page
  bool done = false;         // no entries after last_id
};

// A client's word that an image it was served failed to load (REPORT_FAILURE).
struct FailureReport {
  std::uint32_t cu_result = 0;
  proto::FailureStage stage = proto::FailureStage::load;
  std::string detail;             // free text, at most proto::k_max_failure_detail_length bytes
  std::uint32_t reporter_uid = 0;  // from SO_PEERCRED
};

// What a failure report did (docs/security.md "Failure reports").
enum class ReportVerdict {
  quarantined,          // now quarantined, for every client
  already_quarantined,  // it was; the first reason is kept
  // A shared entry reported by an untrusted uid: no longer served to that uid, still served to
  // everyone else until report_quorum distinct uids have reported the same image.
  hidden_from_reporter,
};

struct ReportOutcome {
  std::uint32_t namespace_id = k_shared_namespace;  // of the entry the report applied to
  ReportVerdict verdict = ReportVerdict::quarantined;
  // Distinct untrusted uids that have reported this shared image so far (0 for other entries).
  std::uint32_t reporters = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // By key fields: the daemon computes key_id = proto::key_id(key) itself. Lookups never serve a
  // quarantined entry (report_failure).
  virtual Result<std::optional<StoredImage>> lookup(const proto::Digest256& key_id, const Visibility& who) = 0;
  // lookup(), and on a miss why (`why` is left alone on a hit or an error). A store that cannot tell
  // says not_found.
  virtual Result<std::optional<StoredImage>> lookup_explained(const proto::Digest256& key_id, const Visibility& who,
                                                              MissReason& why) {
    why = MissReason::not_found;
    return lookup(key_id, who);
  }
  // By proto::fast_key_id (LOOKUP selector 2): the live entry with that fast key the caller sees,
  // shared first. The caller must check the entry's content digest before trusting it (key.hpp).
  virtual Result<std::optional<StoredImage>> lookup_fast(const proto::Digest256& fast_key_id,
                                                         const Visibility& who) = 0;
  // By a hex key-id prefix (8..64 digits). More than one visible key id matching is an
  // ErrorCode::invalid_argument error whose message says "ambiguous".
  virtual Result<std::optional<StoredImage>> lookup_prefix(const std::string& prefix, const Visibility& who) = 0;
  // Inserts or replaces the entry (key id, namespace); a replaced entry is live again, whatever its
  // quarantine. Errors: no_space when the disk is full.
  virtual Result<PutOutcome> put(const PutInput& input) = 0;
  // Quarantined entries included (EntryInfo::quarantined_at_ms is set).
  virtual Result<ListPage> list(const ListQuery& query, const Visibility& who) = 0;
  // Removes what `who` owns (trusted: any namespace) under the prefix; returns how many entries.
  // A prefix matching more than one key id is an "ambiguous" invalid_argument error.
  virtual Result<std::uint32_t> remove(const std::string& prefix, const Visibility& who) = 0;
  virtual Result<Totals> totals() = 0;
  // Reads one row per namespace (schema 5's namespace_totals), never the entries.
  virtual Result<NamespaceTotals> namespace_totals(unsigned top) = 0;
  // Applies a failure report to the entry a lookup by `who` would serve (shared first, then the
  // caller's own). A trusted caller's report, or one on the caller's own entry, quarantines it, so
  // no lookup serves it again until a PUT replaces it. An untrusted caller's report on a shared
  // entry hides that entry from the caller's lookups at once and quarantines it only once
  // report_quorum distinct uids have reported it (SqliteStoreOptions). When no visible entry of
  // the key is live, the report applies to the first quarantined one (shared first) and keeps its
  // first reason. nullopt: no entry of the key is visible to `who`. A write: runs on the single
  // writer (a repeated report by the same uid writes nothing).
  virtual Result<std::optional<ReportOutcome>> report_failure(const proto::Digest256& key_id, const Visibility& who,
                                                              const FailureReport& report) = 0;
  // Hits and last-used times are kept in memory by lookup() and written here in one transaction,
  // so that hits do not become writes. The daemon calls it periodically and at shutdown. What is
  // kept between flushes is bounded (Totals::usage_pending); a failed flush keeps its records
  // within that bound.
  virtual Result<void> flush_usage() = 0;
  // A client asked for an entry keyed to this driver (LOOKUP by key or fast key, COMPILE; a hit
  // and a PUT record their own): the driver is in use, so its entries are not stale. Kept in
  // memory, a bounded number of drivers (driver_log.hpp), and written by flush_usage() only for a
  // driver that has entries; never a write of its own.
  virtual void note_driver_asked(std::uint32_t driver_api, const std::string& driver_build) = 0;
  // Runs eviction now: every entry of a stale driver, then least recently used entries while the
  // store is over its limit (down to the low-water mark, as a PUT would). A write.
  virtual Result<GcOutcome> collect_garbage() = 0;

  // Published images (daemon/publish/). The metadata of row `row_id` if it is a live entry of the
  // shared namespace whose fast key id is `fast_key_id`: the only rows that may be published.
  virtual Result<std::optional<proto::EntryInfo>> publishable_entry(std::int64_t row_id,
                                                                    const proto::Digest256& fast_key_id) = 0;
  // A client loaded the published copy of the live shared entry with this fast key (HIT_NOTE):
  // counted as a lookup() hit would be (hits, last use), without reading the image. nullopt: no
  // such entry (removed or quarantined since it was published).
  virtual Result<std::optional<proto::EntryInfo>> note_published_hit(const proto::Digest256& fast_key_id) = 0;
  // Installs the one listener of dropped rows (RowDropped). Call before the store is shared
  // between threads.
  virtual void on_row_dropped(RowDropped listener) = 0;

  // PRAGMA integrity_check on one read connection: "ok", or its first findings, one per line. It
  // reads the whole file; lookups keep going on the other connections meanwhile.
  virtual Result<std::string> integrity_check() = 0;
  // See VerifyBatch. Reads on a read connection; each deletion is a short write of its own.
  virtual Result<VerifyBatch> verify_entries(std::int64_t after_id, unsigned limit) = 0;
};

}  // namespace jitcache::daemon::store
