// RecoveringStore: the daemon's Store. It forwards every call to a SqliteStore and replaces that
// store with an empty one when its database turns out to be corrupt (docs/operations.md
// "Corruption"):
//   - at open, when the file is not an SQLite database, not a jitcache one, or fails
//     PRAGMA quick_check;
//   - while running, when any call fails with ErrorCode::corrupt (SQLITE_CORRUPT or
//     SQLITE_NOTADB from a statement, or a row SQLite's own checks should have made impossible).
// Either way the file and its -wal/-shm are set aside under a time-stamped name (set_aside.hpp),
// an empty store is created at the original path, the reset is logged as an error with its
// reason and the moved-aside path, and the daemon keeps serving. The call that hit the corruption
// fails (the server answers `internal`); later calls are served by the new store. Totals carry
// the in-memory counters over and add store_resets.
//
// Thread safety: as Store. Every call enters a gate (a count of calls in progress) and holds the
// current SqliteStore only while inside it. A reset closes the gate to new calls, waits until the
// calls in progress have left (each is bounded by SQLite's busy_timeout and its own work), and
// only then closes every connection of the old store, the writer and all readers, renames the
// files and opens the new store; then it reopens the gate. So no connection is ever used on a
// file being renamed, and no request sees a half-swapped store. Several calls failing on the same
// corruption reset once: a reset names the generation it replaces, and a later request for the
// same generation is a no-op.
//
// Before every write (PUT, REMOVE, REPORT_FAILURE, GC, and the periodic usage flush) it also checks
// that the database, its -wal and its -shm are still the files it opened (database_files.hpp). When
// one was deleted or replaced (an operator removing the state directory's files under a running
// daemon), the store is closed and reopened on whatever is at the path now: an empty new database
// when nothing is, never the old files set aside. The reopen is logged as an error, counted in
// Totals::store_reopens, and the write that noticed it goes to the reopened store, so it survives a
// restart; what was written between the deletion and the check is lost, and said to be.
// Rationale: a gate of our own rather than std::shared_mutex, whose glibc implementation prefers
// readers: under a steady stream of lookups (each failing on the damaged file) a reset could wait
// for ever.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include <daemon/store/database_files.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <daemon/store/store.hpp>

namespace jitcache::daemon::store {

class RecoveringStore final : public Store {
 public:
  // options.quick_check_at_open is forced on. Errors: those of SqliteStore::open that setting the
  // file aside cannot cure (io, unsupported, no_space, ...), or a failure to set it aside.
  static Result<std::unique_ptr<RecoveringStore>> open(SqliteStoreOptions options);

  Result<std::optional<StoredImage>> lookup(const proto::Digest256& key_id, const Visibility& who) override;
  Result<std::optional<StoredImage>> lookup_explained(const proto::Digest256& key_id, const Visibility& who,
                                                      MissReason& why) override;
  Result<std::optional<StoredImage>> lookup_fast(const proto::Digest256& fast_key_id, const Visibility& who) override;
  Result<std::optional<StoredImage>> lookup_prefix(const std::string& prefix, const Visibility& who) override;
  Result<PutOutcome> put(const PutInput& input) override;
  Result<ListPage> list(const ListQuery& query, const Visibility& who) override;
  Result<std::uint32_t> remove(const std::string& prefix, const Visibility& who) override;
  Result<Totals> totals() override;
  Result<NamespaceTotals> namespace_totals(unsigned top) override;
  Result<std::optional<ReportOutcome>> report_failure(const proto::Digest256& key_id, const Visibility& who,
                                                      const FailureReport& report) override;
  Result<void> flush_usage() override;
  void note_driver_asked(std::uint32_t driver_api, const std::string& driver_build) override;
  Result<GcOutcome> collect_garbage() override;
  Result<std::string> integrity_check() override;
  Result<VerifyBatch> verify_entries(std::int64_t after_id, unsigned limit) override;
  Result<std::optional<proto::EntryInfo>> publishable_entry(std::int64_t row_id,
                                                            const proto::Digest256& fast_key_id) override;
  Result<std::optional<proto::EntryInfo>> note_published_hit(const proto::Digest256& fast_key_id) override;
  // Kept here and installed on every store that replaces the current one, which first tells it
  // k_every_row.
  void on_row_dropped(RowDropped listener) override;

 private:
  RecoveringStore(SqliteStoreOptions options, std::unique_ptr<SqliteStore> store);

  enum class ResetKind {
    corrupt,     // the file is set aside and an empty store made
    files_lost,  // the files were deleted or replaced: the store is reopened on what the path names
  };

  // Runs fn on the current store inside the gate; a corrupt error then resets the store.
  template <class F>
  auto call(F&& fn) -> decltype(fn(std::declval<SqliteStore&>()));
  // call(), after check_files(): for the calls that write.
  template <class F>
  auto write_call(F&& fn) -> decltype(fn(std::declval<SqliteStore&>()));
  // Reopens the store when its files are no longer at their paths.
  void check_files();
  void reset(std::uint64_t generation, ResetKind kind, const Error& cause);

  const SqliteStoreOptions m_options;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  unsigned m_active = 0;        // calls inside the gate
  bool m_resetting = false;     // the gate is closed
  std::uint64_t m_generation = 0;
  std::unique_ptr<SqliteStore> m_store;  // null only while a reset could not open a new one
  RowDropped m_row_dropped;
  std::shared_ptr<const DatabaseFiles> m_files;  // the current store's, replaced with it
  Totals m_carried;             // counters of the stores already replaced
  std::uint64_t m_resets = 0;
  std::uint64_t m_reopens = 0;
};

}  // namespace jitcache::daemon::store
