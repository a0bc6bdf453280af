// SqliteStore: the Store (store.hpp) on one SQLite file in WAL mode, with the schema from schema/
// (docs/entry-format.md).
//
// Thread safety: every method may be called from any thread at once. Reads (lookup, lookup_prefix,
// list, totals) each borrow one of `reader_count` read-only connections, so they run in parallel
// and each sees one consistent snapshot; when all are busy a call waits for one. Writes (put,
// remove, report_failure, flush_usage, collect_garbage, eviction, deleting a corrupt entry) go
// through the single writer connection under a mutex, one transaction at a time, so writers never fight over SQLite's lock.
// Calls block on disk I/O: keep them off the server's accept loop.
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
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>

#include <daemon/store/compression_level.hpp>
#include <daemon/store/connection_pool.hpp>
#include <daemon/store/driver_log.hpp>
#include <daemon/store/entry_row.hpp>
#include <daemon/store/eviction.hpp>
#include <daemon/store/hot_image_cache.hpp>
#include <daemon/store/sqlite_db.hpp>
#include <daemon/store/store.hpp>
#include <daemon/store/usage_log.hpp>

namespace jitcache::daemon::store {

struct SqliteStoreOptions {
  std::filesystem::path path;  // the database file; its directory must exist
  unsigned reader_count = 4;   // read connections (at least 1)
  // How long a statement waits for a lock another process holds (e.g. an operator's sqlite3
  // shell) before the call fails with ErrorCode::unavailable.
  std::chrono::milliseconds busy_timeout{5000};
  std::int64_t cache_size_kib = 16 * 1024;  // page cache per connection
  std::int64_t reader_mmap_bytes = 2ll << 30;  // memory-mapped reads per reader connection (pragmas.hpp)
  // Budget of the in-memory cache of recently served images (config key hot_cache_size); 0: none.
  std::uint64_t hot_cache_bytes = 256ull << 20;
  // Capacity (config keys max_size and stale_driver_after; eviction.hpp). A PUT that would take
  // the stored bytes over max_size_bytes evicts first; 0: no limit. Entries of a driver no client
  // has asked for within stale_driver_after go first; zero: drivers never go stale.
  std::uint64_t max_size_bytes = 0;
  std::chrono::milliseconds stale_driver_after{0};
  // zstd level for new images (config key compression_level, the same default; image_codec.hpp);
  // 0: store raw. Entries already stored keep their codec: a store may hold raw and zstd images
  // side by side.
  int compression_level = k_default_compression_level;
  // Tenants (docs/security.md): the stored bytes an untrusted uid's own namespace may hold
  // (namespace_quota.hpp; 0: no quota), and how many distinct untrusted uids must report a shared
  // image failing before it is quarantined for everyone (quarantine.hpp).
  std::uint64_t namespace_quota_bytes = 0;
  unsigned report_quorum = 3;
  // PRAGMA quick_check before anything else is done with the file; a failure is a corrupt error,
  // which RecoveringStore answers by setting the file aside.
  bool quick_check_at_open = false;
  // Unix time in milliseconds for created_at_ms and last_used_at_ms; empty: the system clock.
  // Tests inject a fake one.
  std::function<std::int64_t()> clock;
};

class SqliteStore final : public Store {
 public:
  // Opens or creates the file, switches it to WAL, applies pending migrations (migrator.hpp), and
  // opens the readers. Errors: corrupt (not an SQLite database, not a jitcache one, or it fails
  // quick_check when asked: the daemon sets the file aside, recovering_store.hpp), unsupported (written by a newer, incompatible jitcached), io, no_space.
  static Result<std::unique_ptr<SqliteStore>> open(const SqliteStoreOptions& options);

  // Flushes pending usage as a last effort (logged on failure); the daemon should still call
  // flush_usage() itself at shutdown to see the result.
  ~SqliteStore() override;

  // The image is decoded (zstd entries) and checked against the checksum of its raw bytes after the
  // read transaction ends (verified_image.hpp). A checksum mismatch, a blob of the wrong size, a
  // frame that does not decode to raw_size bytes or a missing image deletes the entry, counts it in
  // Totals::corrupt_entries, logs a warning with its key id and returns "not found". The image
  // returned, and the one the hot image cache keeps, is always the raw one.
  Result<std::optional<StoredImage>> lookup(const proto::Digest256& key_id, const Visibility& who) override;
  // On a miss of a live entry, one more read in the same snapshot tells a quarantined entry apart.
  Result<std::optional<StoredImage>> lookup_explained(const proto::Digest256& key_id, const Visibility& who,
                                                      MissReason& why) override;
  Result<std::optional<StoredImage>> lookup_fast(const proto::Digest256& fast_key_id, const Visibility& who) override;
  Result<std::optional<StoredImage>> lookup_prefix(const std::string& prefix, const Visibility& who) override;
  // Compresses the image (compression_level) before taking the writer mutex; stores it raw when that
  // does not make it smaller. Replacing an entry starts it afresh: created_at_ms and
  // last_used_at_ms become now, hits 0.
  // When the image would take the store over max_size, usage is written and eviction runs first,
  // in a transaction of its own; an image larger than max_size alone is too_large.
  Result<PutOutcome> put(const PutInput& input) override;
  // query.cursor: "" or a next_cursor from an earlier page (list_cursor.hpp); anything else is
  // invalid_argument, as are a limit outside 1..1000 and a prefix that is not 0..64 hex digits.
  Result<ListPage> list(const ListQuery& query, const Visibility& who) override;
  Result<std::uint32_t> remove(const std::string& prefix, const Visibility& who) override;
  Result<Totals> totals() override;
  // sqlite_store_namespaces.cpp.
  Result<NamespaceTotals> namespace_totals(unsigned top) override;
  // quarantine.hpp does the work, on the writer.
  Result<std::optional<ReportOutcome>> report_failure(const proto::Digest256& key_id, const Visibility& who,
                                                      const FailureReport& report) override;
  Result<void> flush_usage() override;
  void note_driver_asked(std::uint32_t driver_api, const std::string& driver_build) override;
  Result<GcOutcome> collect_garbage() override;
  Result<std::optional<proto::EntryInfo>> publishable_entry(std::int64_t row_id,
                                                            const proto::Digest256& fast_key_id) override;
  Result<std::optional<proto::EntryInfo>> note_published_hit(const proto::Digest256& fast_key_id) override;
  void on_row_dropped(RowDropped listener) override { m_row_dropped = std::move(listener); }

  // Both in sqlite_store_verify.cpp.
  Result<std::string> integrity_check() override;
  Result<VerifyBatch> verify_entries(std::int64_t after_id, unsigned limit) override;

  // What this object counted in memory since it was opened (the parts of Totals not read from the
  // file), so that RecoveringStore can carry them over to the store that replaces it.
  Totals session_counters() const;

  // Makes closing leave the -wal and -shm paths alone (SQLITE_FCNTL_PERSIST_WAL on every
  // connection). For a store whose files were deleted or replaced under it: the last connection to
  // close would otherwise unlink `<path>-wal` and `-shm` by name, which may by then be another
  // database's. Call only while no other call is using the store (RecoveringStore's closed gate).
  void leave_files_at_close();

 private:
  SqliteStore(SqliteDb writer, std::vector<std::unique_ptr<SqliteDb>> readers, std::function<std::int64_t()> clock,
              std::uint64_t hot_cache_bytes, EvictionPolicy policy, int compression_level,
              std::uint64_t namespace_quota_bytes, unsigned report_quorum);

  // A lookup or a published hit served this entry: its hit and its driver's use, kept in memory.
  void note_served(const proto::EntryInfo& info);
  // Both under m_writer_mutex. Eviction writes the usage kept in memory first, so that an entry hit
  // since the last flush is ordered by that hit, and drops the evicted rows' cached images.
  // Images already handed out stay valid: they are shared_ptr buffers the reply owns.
  Result<void> flush_usage_locked();
  Result<EvictionResult> evict_locked(const EvictionRequest& request);
  // Makes room for `incoming_bytes` within an untrusted namespace's quota (namespace_quota.hpp).
  Result<void> evict_over_quota_locked(std::uint32_t namespace_id, std::uint64_t incoming_bytes);

  // Reads the visible row and its image in one snapshot and verifies the image.
  // The row `sql` selects for (id, caller's namespace), its image verified; ?1 is `id`, ?2 the namespace.
  // `why` (lookups by key id only): set on a miss.
  Result<std::optional<StoredImage>> read_verified(const std::string& sql, const proto::Digest256& id,
                                                   const Visibility& who, const std::string& what,
                                                   MissReason* why = nullptr);
  // true when this call deleted it (false: already gone or replaced, or the delete failed).
  bool discard_corrupt_entry(std::int64_t id, const proto::EntryInfo& info, std::string_view reason);
  // Under m_writer_mutex, after the commit that replaced or deleted the row: drops its cached image
  // and tells the RowDropped listener.
  void drop_row(std::int64_t id);
  // The first entries row `sql` selects with the parameters `bind` sets, read on a reader.
  Result<std::optional<EntryRow>> read_row(const std::string& sql, const std::function<void(Statement&)>& bind,
                                           const std::string& what);

  std::mutex m_writer_mutex;
  SqliteDb m_writer;
  ConnectionPool<SqliteDb> m_readers;
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
  RowDropped m_row_dropped;
};

}  // namespace jitcache::daemon::store
