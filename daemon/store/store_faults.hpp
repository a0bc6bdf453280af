// StoreFaults: the one seam below every class of the SQLite store (SqliteStore, SqliteSources,
// SqliteEntryTransfer, SqliteDiagnosis) where a test makes the store fail, as LevelDB's tests make
// a database fail through its Env (db/fault_injection_test.cc). The daemon installs none
// (SqliteStoreOptions::faults is null) and pays one null check per call and per statement step.
// Two places are asked:
//   - StoreHandle::begin_call, as each call of the store's interfaces starts (store_call.hpp),
//     before it reaches the database: before the recovering handle's gate and its check of the
//     files (recovering_database.hpp). An error returned there is the call's answer; the database
//     never sees it, so it resets nothing. A test may also damage the files there, so that the call
//     meets real corruption or lost files.
//   - Statement::step, and so every prepared statement, BEGIN and COMMIT included, on every
//     connection of the store: the writer, the readers and an export's own (sqlite_db.hpp); not the
//     PRAGMAs and migrations run once at open (SqliteDb::exec). An error returned there is what
//     that step returns, as SQLite's own would be: a failure half-way through a call, its
//     transaction rolled back as after a real one.
//
// Thread safety: both are called from any thread at once, by whichever thread runs the call; an
// implementation guards its own state. It must outlive the store.
#pragma once

#include <optional>
#include <string_view>

#include <common/result.hpp>

#include <daemon/store/store_call.hpp>

namespace jitcache::daemon::store {

class StoreFaults {
 public:
  virtual ~StoreFaults() = default;

  // The error `call` fails with instead of reaching the database, or nullopt to go on.
  virtual std::optional<common::Error> before_call(StoreCall call) = 0;
  // The error this step of the statement `sql` (its text as prepared) fails with, or nullopt.
  virtual std::optional<common::Error> before_step(std::string_view sql) = 0;
};

}  // namespace jitcache::daemon::store
