// SqliteStore: the store's entries (store.hpp, and its maintenance, tenancy and publish-source
// interfaces) on one SQLite file in WAL mode, with the schema from schema/ (docs/entry-format.md).
// Beside it, over the same database handle (store_handle.hpp), as LevelDB keeps VersionSet and
// TableCache beside DBImpl, three classes of their own that it owns and hands out:
//   sources()    SqliteSources, the kept sources and the hot set (sources.hpp, sqlite_sources.hpp)
//   transfer()   SqliteEntryTransfer, bundles' exports and imports (entry_transfer.hpp)
//   diagnosis()  SqliteDiagnosis, EXPLAIN's and MISSES' questions (diagnosis.hpp)
// They share the handle's connections, writer mutex and recovery; what they need of the entries
// (usage flushes, eviction, the hot image cache) SqliteStore gives them through EntryUpkeep
// (entry_upkeep.hpp). Its own files, one concern each:
//   sqlite_store.cpp             opening, the swap hooks, totals, the upkeep it does for the others
//   sqlite_store_lookup.cpp      lookups: the row, the hot image cache, the verified image, misses
//   sqlite_store_write.cpp       PUT and REMOVE
//   sqlite_store_capacity.cpp    usage flushes, eviction, namespace quotas, GC
//   sqlite_store_list.cpp        LIST pages
//   sqlite_store_tenancy.cpp     bytes by namespace, failure reports
//   sqlite_store_publish.cpp     the published images' questions, dropped rows
//   sqlite_store_verify.cpp      VERIFY's integrity check and pages of images
//
// Thread safety: every method may be called from any thread at once, and so may those of the three
// classes. Reads (lookup, list, totals, ...) each borrow one of `reader_count` read-only
// connections, so they run in parallel and each sees one consistent snapshot; when all are busy a
// call waits for one. Writes (put, remove, report_failure, flush_usage, collect_garbage, eviction,
// deleting a corrupt entry, and the imports and kept sources of the classes beside it) go through
// the single writer connection under the handle's writer mutex, one transaction at a time, so
// writers never fight over SQLite's lock. Every call runs on the current database through
// RecoveringDatabase, which with SqliteStoreOptions::recover replaces a corrupt or lost database
// while the store serves (recovering_database.hpp). Calls block on disk I/O: keep them off the
// server's accept loop. sources(), transfer() and diagnosis() live as long as the store.
//
// A lookup first reads the entries row; when the hot image cache (hot_image_cache.hpp) holds that
// row's image for the row's checksum and size, it serves that without reading or hashing the blob.
// Every write that replaces or deletes a row drops the row's cached image before the writer mutex
// is released.
//
// Visibility (docs/entry-format.md "What the store does with them"): lookups see the shared
// namespace and the caller's own, shared first, and skip quarantined entries; a failure report
// applies to the entry a lookup would serve; LIST sees the same namespaces, quarantined entries
// included, or everything for a trusted caller; REMOVE touches only the caller's own namespace, or
// everything for a trusted caller. An untrusted caller whose own namespace is the shared one owns
// nothing: it can never remove shared entries.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include <daemon/store/driver_log.hpp>
#include <daemon/store/entry_row.hpp>
#include <daemon/store/entry_upkeep.hpp>
#include <daemon/store/eviction.hpp>
#include <daemon/store/hot_image_cache.hpp>
#include <daemon/store/maintenance.hpp>
#include <daemon/store/publish_source.hpp>
#include <daemon/store/recent_evictions.hpp>
#include <daemon/store/sqlite_db.hpp>
#include <daemon/store/sqlite_diagnosis.hpp>
#include <daemon/store/sqlite_entry_transfer.hpp>
#include <daemon/store/sqlite_sources.hpp>
#include <daemon/store/sqlite_store_options.hpp>
#include <daemon/store/store.hpp>
#include <daemon/store/store_handle.hpp>
#include <daemon/store/tenancy.hpp>
#include <daemon/store/usage_log.hpp>

namespace jitcache::daemon::store {

class SqliteStore final : public Store, public Maintenance, public Tenancy, public PublishSource, private EntryUpkeep {
 public:
  // Opens or creates the file, switches it to WAL, applies pending migrations (migrator.hpp), and
  // opens the readers. Errors: corrupt (not an SQLite database, not a jitcache one, or it fails
  // quick_check when asked; with options.recover such a file is set aside instead), unsupported
  // (written by a newer, incompatible jitcached), io, no_space.
  static Result<std::unique_ptr<SqliteStore>> open(const SqliteStoreOptions& options);

  // Flushes pending usage as a last effort (logged on failure); the daemon should still call
  // flush_usage() itself at shutdown to see the result.
  ~SqliteStore() override;

  // Store. The image is decoded (zstd entries) and checked against the checksum of its raw bytes
  // after the read transaction ends (verified_image.hpp). A checksum mismatch, a blob of the wrong
  // size, a frame that does not decode to raw_size bytes or a missing image deletes the entry,
  // counts it in Totals::corrupt_entries, logs a warning with its key id and is a corrupt miss.
  // The image returned, and the one the hot image cache keeps, is always the raw one. A miss of a
  // live entry reads once more, in the same snapshot, to tell a quarantined entry apart.
  Result<LookupOutcome> lookup(const Selector& selector, const Visibility& who) override;
  // Compresses the image (compression_level) before taking the writer mutex; stores it raw when that
  // does not make it smaller. Replacing an entry starts it afresh: created_at_ms and
  // last_used_at_ms become now, hits 0.
  // When the image would take the store over max_size, usage is written and eviction runs first,
  // in a transaction of its own; an image larger than max_size alone is too_large.
  // A shared entry's input.source is kept after the entry's commit, in a transaction of its own
  // (sources.hpp); failing to keep it is logged, never the PUT's failure.
  Result<PutOutcome> put(const PutInput& input) override;
  Result<std::uint32_t> remove(const std::string& prefix, const Visibility& who) override;
  // query.cursor: "" or a next_cursor from an earlier page (list_cursor.hpp); anything else is
  // invalid_argument, as are a limit outside 1..1000 and a prefix that is not 0..64 hex digits.
  Result<ListPage> list(const ListQuery& query, const Visibility& who) override;
  Result<Totals> totals() override;

  // Maintenance.
  Result<void> flush_usage() override;
  void note_driver_asked(const AskedDriver& driver) override;
  Result<GcOutcome> collect_garbage() override;
  Result<std::string> integrity_check() override;
  Result<VerifyBatch> verify_entries(std::int64_t after_id, unsigned limit) override;

  // Tenancy; quarantine.hpp does the work of a report, on the writer.
  Result<NamespaceTotals> namespace_totals(unsigned top) override;
  Result<std::optional<ReportOutcome>> report_failure(const proto::Digest256& key_id, const Visibility& who,
                                                      const FailureReport& report) override;

  // PublishSource. A database swapped for another (recovering_database.hpp) tells the listener
  // k_every_row once the store serves again.
  Result<std::optional<proto::EntryInfo>> publishable_entry(std::int64_t row_id,
                                                            const proto::Digest256& fast_key_id) override;
  Result<std::optional<proto::EntryInfo>> note_published_hit(const proto::Digest256& fast_key_id) override;
  void on_row_dropped(RowDropped listener) override;

  // The classes beside the store, over its database handle (the header).
  Sources& sources() { return m_sources; }
  EntryTransfer& transfer() { return m_transfer; }
  Diagnosis& diagnosis() { return m_diagnosis; }

 private:
  SqliteStore(std::unique_ptr<RecoveringDatabase> database, const SqliteStoreOptions& options);

  // EntryUpkeep, for the classes beside the store; under the writer mutex.
  Result<void> flush_usage_locked(StoreDatabase& db) override;
  Result<void> make_room_locked(StoreDatabase& db, std::uint32_t namespace_id, std::uint64_t quota_bytes,
                                std::uint64_t stored_bytes) override;
  void rows_written_locked(std::span<const std::int64_t> rows,
                           std::span<const proto::Digest256> shared_fast_key_ids) override;

  // A database swapped for another: every row id now names something else, and what was counted
  // in memory for the old file's rows is no use (recovering_database.hpp SwapHooks).
  void forget_rows();
  // The listener, told k_every_row after a swap.
  void tell_every_row_dropped();

  // A lookup or a published hit served this entry: its hit and its driver's use, kept in memory.
  void note_served(const proto::EntryInfo& info);
  // Under the writer mutex. Eviction writes the usage kept in memory first (flush_usage_locked),
  // so that an entry hit since the last flush is ordered by that hit, and drops the evicted rows'
  // cached images. Images already handed out stay valid: they are shared_ptr buffers the reply owns.
  Result<EvictionResult> evict_locked(StoreDatabase& db, const EvictionRequest& request);
  // Makes room for `incoming_bytes` within an untrusted namespace's quota (namespace_quota.hpp).
  Result<void> evict_over_quota_locked(StoreDatabase& db, std::uint32_t namespace_id, std::uint64_t incoming_bytes);
  // When the store is over max_size with `incoming_bytes` more, an untrusted namespace's PUT first
  // evicts that namespace's own entries, down to the low-water mark if it holds enough
  // (namespace_quota.hpp evict_from_namespace); evict_locked then takes the rest from everyone.
  Result<void> evict_own_first_locked(StoreDatabase& db, std::uint32_t namespace_id, std::uint64_t incoming_bytes);
  Result<Totals> totals_of(StoreDatabase& db);

  // The visible row the key id or fast key id names and its image, read in one snapshot; the image
  // verified. A miss says why.
  Result<LookupOutcome> read_verified(StoreDatabase& db, Selector::Kind kind, const proto::Digest256& id,
                                      const Visibility& who);
  Result<LookupOutcome> lookup_prefix(StoreDatabase& db, const std::string& prefix, const Visibility& who);
  // true when this call deleted it (false: already gone or replaced, or the delete failed).
  // Lets the hot image cache answer the next LOOKUP by this selector (hot_image_cache.hpp).
  void remember(bool by_fast_key, const proto::Digest256& id, const EntryRow& row, std::uint64_t ticket);
  bool discard_corrupt_entry(StoreDatabase& db, std::int64_t id, const proto::EntryInfo& info, std::string_view reason);
  // Under the writer mutex, after the commit that replaced or deleted the row: drops its cached
  // image and tells the RowDropped listener.
  void drop_row(std::int64_t id);
  // The first entries row `sql` selects with the parameters `bind` sets, read on a reader.
  Result<std::optional<EntryRow>> read_row(StoreDatabase& db, const std::string& sql,
                                           const std::function<void(Statement&)>& bind, const std::string& what);

  StoreHandle m_handle;
  UsageLog m_usage;
  DriverLog m_drivers;
  const EvictionPolicy m_policy;
  const int m_compression_level;
  const std::uint64_t m_namespace_quota;
  const unsigned m_report_quorum;
  std::atomic<std::uint64_t> m_corrupt_entries{0};
  std::atomic<std::uint64_t> m_quota_evictions{0};
  std::atomic<std::uint64_t> m_evictions{0};
  std::atomic<std::uint64_t> m_evicted_bytes{0};
  std::function<std::int64_t()> m_clock;
  HotImageCache m_hot;
  RecentEvictions m_recent_evictions;
  RowDropped m_row_dropped;  // set and read under the writer mutex
  // Last: they use the handle and the members above, and go first.
  SqliteSources m_sources;
  SqliteEntryTransfer m_transfer;
  SqliteDiagnosis m_diagnosis;
};

}  // namespace jitcache::daemon::store
