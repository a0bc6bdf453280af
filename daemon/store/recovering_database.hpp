// RecoveringDatabase: the handle through which SqliteStore reaches its current database file
// (store_database.hpp), and swaps it for another when the file fails it (docs/operations.md
// "Corruption", "The state directory"). Every store call runs its body on the current database
// through run() or run_write(); nothing forwards call by call, so a new store method needs no
// code here.
//
// With recovery on (SqliteStoreOptions::recover, the daemon's store):
//   - a database that is corrupt at open (not an SQLite database, not a jitcache one, or failing
//     PRAGMA quick_check) is set aside under a time-stamped name (set_aside.hpp) and an empty one
//     made at its path;
//   - a call that fails with ErrorCode::corrupt while serving (SQLITE_CORRUPT or SQLITE_NOTADB
//     from a statement, or a row SQLite's own checks should have made impossible) makes the same
//     happen once it has returned: that call fails (the server answers `internal`), later calls
//     are served by the new, empty database;
//   - before every write (run_write: PUT, REMOVE, REPORT_FAILURE, GC, the usage flush) the
//     database, its -wal and its -shm are checked to still be the files it opened
//     (database_files.hpp). When one was deleted or replaced, the database is closed and reopened
//     on whatever the path holds now, an empty new one when nothing is, never setting the old
//     files aside, and the write goes to the reopened database, so it survives a restart.
// Each is logged as an error with its reason and counted (resets(), reopens()). With recovery off a
// corrupt error is returned and nothing else happens.
//
// Thread safety: run() and run_write() may be called from any thread at once. Every call enters a
// gate (a count of calls in progress) and uses the current database only inside it. A swap closes
// the gate to new calls, waits until the calls in progress have left (each is bounded by SQLite's
// busy_timeout and its own work), and only then closes every connection of the old database, the
// writer and all readers, renames the files and opens the new one; then it reopens the gate. So no
// connection is ever used on a file being renamed, and no call sees a half-swapped store. Several
// calls failing on the same corruption swap once: a swap names the generation it replaces, and a
// later request for the same generation is a no-op. Calls must not nest: a body that ran run()
// again could wait for a swap that waits for it.
// Rationale: a gate of our own rather than std::shared_mutex, whose glibc implementation prefers
// readers: under a steady stream of lookups (each failing on the damaged file) a swap could wait
// for ever.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>

#include <common/result.hpp>

#include <daemon/store/sqlite_store_options.hpp>
#include <daemon/store/store_database.hpp>

namespace jitcache::daemon::store {

class RecoveringDatabase {
 public:
  // What the store does around a swap. `replaced` runs while the gate is closed and empty, right
  // after the new database is in place (or could not be opened): the store drops what it keeps by
  // row id or for the old file. `reopened` runs after the gate has opened again.
  struct SwapHooks {
    std::function<void()> replaced;
    std::function<void()> reopened;
  };

  // Opens the database (recovering as the header says when options.recover is set). Errors: those
  // of open_store_database that setting the file aside cannot cure (io, unsupported, no_space,
  // ...), or a failure to set it aside.
  static Result<std::unique_ptr<RecoveringDatabase>> open(const SqliteStoreOptions& options);

  // Installed once, before the store is shared between threads.
  void set_hooks(SwapHooks hooks) { m_hooks = std::move(hooks); }

  // Runs fn(StoreDatabase&) on the current database inside the gate and returns its Result; a
  // corrupt error then swaps the database (recovery on).
  template <class F>
  auto run(F&& fn) -> decltype(fn(std::declval<StoreDatabase&>()));
  // run(), after checking that the database's files are still at their paths (recovery on).
  template <class F>
  auto run_write(F&& fn) -> decltype(fn(std::declval<StoreDatabase&>())) {
    if (m_options.recover) check_files();
    return run(std::forward<F>(fn));
  }
  // fn on the current database, outside the gate and without recovery, or nothing when there is
  // none. Only while no other call can run (the store's destructor).
  template <class F>
  void run_alone(F&& fn) {
    if (m_database) fn(*m_database);
  }

  std::uint64_t resets() const;   // corrupt databases set aside while running
  std::uint64_t reopens() const;  // databases reopened because their files were deleted or replaced

 private:
  enum class SwapKind {
    corrupt,     // the file is set aside and an empty database made
    files_lost,  // the files were deleted or replaced: the database is reopened on what the path names
  };

  RecoveringDatabase(SqliteStoreOptions options, std::unique_ptr<StoreDatabase> database);

  struct Entry {
    StoreDatabase* database = nullptr;
    std::uint64_t generation = 0;
  };
  Entry enter();
  void leave();
  void check_files();
  void swap(std::uint64_t generation, SwapKind kind, const common::Error& cause);

  const SqliteStoreOptions m_options;
  SwapHooks m_hooks;
  mutable std::mutex m_mutex;
  std::condition_variable m_changed;
  unsigned m_active = 0;    // calls inside the gate
  bool m_swapping = false;  // the gate is closed
  std::uint64_t m_generation = 0;
  std::unique_ptr<StoreDatabase> m_database;  // null only while a swap could not open a new one
  std::uint64_t m_resets = 0;
  std::uint64_t m_reopens = 0;
};

template <class F>
auto RecoveringDatabase::run(F&& fn) -> decltype(fn(std::declval<StoreDatabase&>())) {
  const Entry entry = enter();
  auto result = [&]() -> decltype(fn(std::declval<StoreDatabase&>())) {
    if (entry.database == nullptr) {
      return common::make_error(common::ErrorCode::corrupt,
                                "the store database could not be recreated after a corruption");
    }
    return fn(*entry.database);
  }();
  leave();
  if (m_options.recover && !result && result.error().code == common::ErrorCode::corrupt) {
    swap(entry.generation, SwapKind::corrupt, result.error());
  }
  return result;
}

}  // namespace jitcache::daemon::store
