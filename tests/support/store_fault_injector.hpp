// StoreFaultInjector: the faults a test puts under a real SqliteStore and every class beside it
// (SqliteSources, SqliteEntryTransfer, SqliteDiagnosis), through the one seam they all share
// (daemon/store/store_faults.hpp; SqliteStoreOptions::faults). After LevelDB's
// db/fault_injection_test.cc: the real store on a real file, and a test that says what fails and
// how:
//   - a call of the store's interfaces (daemon/store/store_call.hpp): the nth one from now, or
//     every one, fails with a chosen ErrorCode without reaching the database (fail_nth,
//     fail_every); or real damage is done to the database's files just before the nth reaches it
//     (corrupt_before, delete_files_before), so the store meets SQLITE_CORRUPT or lost files as it
//     would on a failing disk or under a careless operator;
//   - a statement, half-way through a call: the nth step from now of a statement whose SQL
//     contains a given text, or every one, fails with a chosen ErrorCode as SQLite's own failure
//     would (fail_step, fail_every_step), so a transaction is rolled back where it stands.
// Header-only because it needs the daemon's store and Catch2 (store_damage.hpp), which the support
// library does not link. Thread safety: every method may be called from any thread; the faults
// are counted and taken under one mutex, and files are damaged outside it.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <common/result.hpp>

#include <daemon/store/store_call.hpp>
#include <daemon/store/store_faults.hpp>
#include <tests/support/store_damage.hpp>

namespace jitcache::testing {

using daemon::store::StoreCall;

class StoreFaultInjector final : public daemon::store::StoreFaults {
 public:
  // `database`: the store's file, for the faults that damage it (corrupt_before,
  // delete_files_before); may be left empty by a test that damages nothing.
  explicit StoreFaultInjector(std::filesystem::path database = {}) : m_database(std::move(database)) {}

  // The nth call of `call` from now (1: the next one) fails with `code` and never reaches the store.
  void fail_nth(StoreCall call, unsigned n, common::ErrorCode code) {
    std::lock_guard lock(m_mutex);
    slot(call) = Fault{Kind::fail, m_calls[index(call)] + n, code};
  }
  // Every call of `call` from now fails with `code`, until heal().
  void fail_every(StoreCall call, common::ErrorCode code) {
    std::lock_guard lock(m_mutex);
    slot(call) = Fault{Kind::fail_every, 0, code};
  }
  // Just before the nth call of `call` from now reaches the store, every page of its database but
  // the first is overwritten: that call and the store meet real corruption.
  void corrupt_before(StoreCall call, unsigned n) {
    std::lock_guard lock(m_mutex);
    slot(call) = Fault{Kind::corrupt, m_calls[index(call)] + n, common::ErrorCode::corrupt};
  }
  // Just before the nth call of `call` from now reaches the store, its database and the -wal and
  // -shm beside it are deleted, as an operator cleaning the state directory would.
  void delete_files_before(StoreCall call, unsigned n) {
    std::lock_guard lock(m_mutex);
    slot(call) = Fault{Kind::delete_files, m_calls[index(call)] + n, common::ErrorCode::io};
  }
  // The nth step from now (1: the next one) of a statement whose SQL contains `sql_part` fails with
  // `code`, on whichever connection and in whichever call it runs. One step fault at a time.
  void fail_step(std::string sql_part, unsigned n, common::ErrorCode code) {
    std::lock_guard lock(m_mutex);
    m_step = StepFault{std::move(sql_part), n, false, code, 0};
  }
  // Every step of a statement whose SQL contains `sql_part` fails with `code`, until heal().
  void fail_every_step(std::string sql_part, common::ErrorCode code) {
    std::lock_guard lock(m_mutex);
    m_step = StepFault{std::move(sql_part), 0, true, code, 0};
  }
  // No more faults; calls and statements go straight through.
  void heal() {
    std::lock_guard lock(m_mutex);
    m_faults = {};
    m_step.reset();
  }
  // Calls of `call` so far, those that failed included.
  unsigned calls(StoreCall call) const {
    std::lock_guard lock(m_mutex);
    return m_calls[index(call)];
  }
  // Steps failed by fail_step or fail_every_step so far.
  unsigned failed_steps() const {
    std::lock_guard lock(m_mutex);
    return m_failed_steps;
  }

  std::optional<common::Error> before_call(StoreCall call) override {
    Fault fault;
    unsigned number = 0;
    {
      std::lock_guard lock(m_mutex);
      number = ++m_calls[index(call)];
      fault = slot(call);
      if (fault.kind != Kind::fail_every && fault.at_call != number) return std::nullopt;
      if (fault.kind != Kind::fail_every) slot(call) = Fault{};
    }
    switch (fault.kind) {
      case Kind::none: return std::nullopt;
      case Kind::fail:
      case Kind::fail_every:
        return common::make_error(fault.code, "injected fault: call " + std::to_string(number) + " of " +
                                                  std::string(daemon::store::store_call_name(call)) + " fails");
      case Kind::corrupt: overwrite_pages_after_the_first(m_database); return std::nullopt;
      case Kind::delete_files:
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(m_database.string() + suffix);
        return std::nullopt;
    }
    return std::nullopt;
  }

  std::optional<common::Error> before_step(std::string_view sql) override {
    std::lock_guard lock(m_mutex);
    if (!m_step || sql.find(m_step->sql_part) == std::string_view::npos) return std::nullopt;
    const unsigned number = ++m_step->seen;
    if (!m_step->every && number != m_step->at_step) return std::nullopt;
    ++m_failed_steps;
    common::Error error = common::make_error(m_step->code, "injected fault: step " + std::to_string(number) + " of \"" +
                                                               m_step->sql_part + "\" fails");
    if (!m_step->every) m_step.reset();
    return error;
  }

 private:
  enum class Kind { none, fail, fail_every, corrupt, delete_files };
  struct Fault {
    Kind kind = Kind::none;
    unsigned at_call = 0;  // the call number (1-based, counted since the injector was made) it applies to
    common::ErrorCode code = common::ErrorCode::internal;
  };
  struct StepFault {
    std::string sql_part;
    unsigned at_step = 0;  // counted from when it was set, among the matching steps
    bool every = false;
    common::ErrorCode code = common::ErrorCode::internal;
    unsigned seen = 0;
  };

  static std::size_t index(StoreCall call) { return static_cast<std::size_t>(call); }
  Fault& slot(StoreCall call) { return m_faults[index(call)]; }

  const std::filesystem::path m_database;
  mutable std::mutex m_mutex;
  std::array<unsigned, daemon::store::k_store_call_count> m_calls{};
  std::array<Fault, daemon::store::k_store_call_count> m_faults{};
  std::optional<StepFault> m_step;
  unsigned m_failed_steps = 0;
};

}  // namespace jitcache::testing
