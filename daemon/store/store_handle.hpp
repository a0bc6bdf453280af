// StoreHandle: the database handle that every class of the SQLite store works through, as
// LevelDB's VersionSet and TableCache work beside DBImpl over one database: SqliteStore (the
// entries), SqliteSources (sources.hpp), SqliteEntryTransfer (entry_transfer.hpp) and
// SqliteDiagnosis (diagnosis.hpp). It holds what they share:
//   - the current database through RecoveringDatabase: the single writer connection, the pool of
//     read connections, and the reset and reopen that replace a corrupt or lost file
//     (recovering_database.hpp);
//   - the writer mutex: every write, whichever class makes it, holds it for its transaction, so
//     the classes never fight over SQLite's write lock, and one class's write (an import's) may
//     call another's upkeep under the same lock (entry_upkeep.hpp);
//   - the fault seam (store_faults.hpp): each call of the store's interfaces starts with
//     begin_call(), and every statement on its connections asks the same seam, so a test can make
//     any class fail without a wrapper around any of them.
// SqliteStore owns the handle; the other classes hold a reference to it and live no longer.
//
// Thread safety: every method may be called from any thread at once. run() and run_write() are
// RecoveringDatabase's (its gate: calls must not nest). The writer mutex is taken inside run() or
// run_write(), never around them, so a swap waiting for the gate never waits for a writer that
// waits for it.
#pragma once

#include <memory>
#include <mutex>
#include <utility>

#include <common/result.hpp>

#include <daemon/store/recovering_database.hpp>
#include <daemon/store/store_call.hpp>
#include <daemon/store/store_database.hpp>
#include <daemon/store/store_faults.hpp>

namespace jitcache::daemon::store {

class StoreHandle {
 public:
  // `faults`: null in the daemon (store_faults.hpp).
  StoreHandle(std::unique_ptr<RecoveringDatabase> database, StoreFaults* faults)
      : m_database(std::move(database)), m_faults(faults) {}

  // The start of a call of the store's interfaces, before anything of it reaches the database: the
  // error an installed fault seam gives it, or success. Once per call, first thing.
  Result<void> begin_call(StoreCall call) {
    if (m_faults == nullptr) return {};
    if (auto fault = m_faults->before_call(call)) return std::move(*fault);
    return {};
  }

  // fn(StoreDatabase&) on the current database (RecoveringDatabase::run, run_write).
  template <class F>
  auto run(F&& fn) -> decltype(fn(std::declval<StoreDatabase&>())) {
    return m_database->run(std::forward<F>(fn));
  }
  template <class F>
  auto run_write(F&& fn) -> decltype(fn(std::declval<StoreDatabase&>())) {
    return m_database->run_write(std::forward<F>(fn));
  }
  // Only while no other call can run (the store's destructor): RecoveringDatabase::run_alone.
  template <class F>
  void run_alone(F&& fn) {
    m_database->run_alone(std::forward<F>(fn));
  }

  // Held by every write for its transaction, whichever class writes.
  std::mutex& writer_mutex() { return m_writer_mutex; }

  // Installed once, before the store is shared between threads (RecoveringDatabase::set_hooks).
  void set_swap_hooks(RecoveringDatabase::SwapHooks hooks) { m_database->set_hooks(std::move(hooks)); }
  std::uint64_t resets() const { return m_database->resets(); }
  std::uint64_t reopens() const { return m_database->reopens(); }

 private:
  std::unique_ptr<RecoveringDatabase> m_database;
  StoreFaults* const m_faults;
  std::mutex m_writer_mutex;
};

}  // namespace jitcache::daemon::store
