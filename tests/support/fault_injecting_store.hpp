// FaultInjectingStore: a real SqliteStore that fails on demand, for tests of what the store's
// callers (the request handler, the compile path) and the store's own recovery do when it fails.
// After LevelDB's db/fault_injection_test.cc: the real thing underneath, and a test that says which
// call fails and how — a chosen ErrorCode returned without reaching the store (fail_nth,
// fail_every), or real damage done to the store's files just before a call reaches it
// (corrupt_before, delete_files_before), so the store meets SQLITE_CORRUPT or lost files as it
// would on a failing disk or under a careless operator.
// Header-only because it needs the daemon's store and Catch2 (store_damage.hpp), which the support
// library does not link. Thread safety: every method may be called from any thread; the faults are
// counted and taken under one mutex, the real store is called outside it.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include <common/result.hpp>

#include <daemon/store/sqlite_store.hpp>
#include <tests/support/store_damage.hpp>

namespace jitcache::testing {

// Every call of the store's interfaces that can fail.
enum class StoreCall : std::size_t {
  lookup,
  put,
  remove,
  list,
  totals,
  flush_usage,
  collect_garbage,
  integrity_check,
  verify_entries,
  namespace_totals,
  report_failure,
  publishable_entry,
  note_published_hit,
  near_entries,
};
inline constexpr std::size_t k_store_call_count = static_cast<std::size_t>(StoreCall::near_entries) + 1;

class FaultInjectingStore final : public daemon::store::Store,
                                  public daemon::store::Maintenance,
                                  public daemon::store::Tenancy,
                                  public daemon::store::PublishSource,
                                  public daemon::store::Diagnosis {
 public:
  // `database`: the real store's file, for the faults that damage it.
  explicit FaultInjectingStore(daemon::store::SqliteStore& real, std::filesystem::path database = {})
      : m_real(real), m_database(std::move(database)) {}

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
  // No more faults; calls go straight through.
  void heal() {
    std::lock_guard lock(m_mutex);
    m_faults = {};
  }
  // Calls of `call` so far, those that failed included.
  unsigned calls(StoreCall call) const {
    std::lock_guard lock(m_mutex);
    return m_calls[index(call)];
  }

  // Store
  common::Result<daemon::store::LookupOutcome> lookup(const daemon::store::Selector& selector,
                                                      const daemon::store::Visibility& who) override {
    if (auto fault = before(StoreCall::lookup)) return *fault;
    return m_real.lookup(selector, who);
  }
  common::Result<daemon::store::PutOutcome> put(const daemon::store::PutInput& input) override {
    if (auto fault = before(StoreCall::put)) return *fault;
    return m_real.put(input);
  }
  common::Result<std::uint32_t> remove(const std::string& prefix, const daemon::store::Visibility& who) override {
    if (auto fault = before(StoreCall::remove)) return *fault;
    return m_real.remove(prefix, who);
  }
  common::Result<daemon::store::ListPage> list(const daemon::store::ListQuery& query,
                                               const daemon::store::Visibility& who) override {
    if (auto fault = before(StoreCall::list)) return *fault;
    return m_real.list(query, who);
  }
  common::Result<daemon::store::Totals> totals() override {
    if (auto fault = before(StoreCall::totals)) return *fault;
    return m_real.totals();
  }

  // Maintenance
  common::Result<void> flush_usage() override {
    if (auto fault = before(StoreCall::flush_usage)) return *fault;
    return m_real.flush_usage();
  }
  void note_driver_asked(const daemon::store::AskedDriver& driver) override { m_real.note_driver_asked(driver); }
  common::Result<daemon::store::GcOutcome> collect_garbage() override {
    if (auto fault = before(StoreCall::collect_garbage)) return *fault;
    return m_real.collect_garbage();
  }
  common::Result<std::string> integrity_check() override {
    if (auto fault = before(StoreCall::integrity_check)) return *fault;
    return m_real.integrity_check();
  }
  common::Result<daemon::store::VerifyBatch> verify_entries(std::int64_t after_id, unsigned limit) override {
    if (auto fault = before(StoreCall::verify_entries)) return *fault;
    return m_real.verify_entries(after_id, limit);
  }

  // Tenancy
  common::Result<daemon::store::NamespaceTotals> namespace_totals(unsigned top) override {
    if (auto fault = before(StoreCall::namespace_totals)) return *fault;
    return m_real.namespace_totals(top);
  }
  common::Result<std::optional<daemon::store::ReportOutcome>> report_failure(
      const proto::Digest256& key_id, const daemon::store::Visibility& who,
      const daemon::store::FailureReport& report) override {
    if (auto fault = before(StoreCall::report_failure)) return *fault;
    return m_real.report_failure(key_id, who, report);
  }

  // PublishSource
  common::Result<std::optional<proto::EntryInfo>> publishable_entry(std::int64_t row_id,
                                                                    const proto::Digest256& fast_key_id) override {
    if (auto fault = before(StoreCall::publishable_entry)) return *fault;
    return m_real.publishable_entry(row_id, fast_key_id);
  }
  common::Result<std::optional<proto::EntryInfo>> note_published_hit(const proto::Digest256& fast_key_id) override {
    if (auto fault = before(StoreCall::note_published_hit)) return *fault;
    return m_real.note_published_hit(fast_key_id);
  }
  void on_row_dropped(daemon::store::RowDropped listener) override { m_real.on_row_dropped(std::move(listener)); }

  // Diagnosis
  common::Result<std::vector<daemon::store::NearEntry>> near_entries(const proto::Digest256& key_id,
                                                                     const std::optional<proto::Digest256>& content,
                                                                     const daemon::store::Visibility& who,
                                                                     std::uint32_t caller_uid,
                                                                     unsigned limit) override {
    if (auto fault = before(StoreCall::near_entries)) return *fault;
    return m_real.near_entries(key_id, content, who, caller_uid, limit);
  }
  std::vector<daemon::store::EvictedEntry> recent_evictions(std::size_t limit,
                                                            const daemon::store::Visibility& who) override {
    return m_real.recent_evictions(limit, who);
  }
  std::vector<daemon::store::EvictedEntry> evictions_of(const proto::Digest256& key_id) override {
    return m_real.evictions_of(key_id);
  }

 private:
  enum class Kind { none, fail, fail_every, corrupt, delete_files };
  struct Fault {
    Kind kind = Kind::none;
    unsigned at_call = 0;  // the call number (1-based, counted since the store was made) it applies to
    common::ErrorCode code = common::ErrorCode::internal;
  };

  static std::size_t index(StoreCall call) { return static_cast<std::size_t>(call); }
  Fault& slot(StoreCall call) { return m_faults[index(call)]; }

  // Counts the call and applies its fault: an error to return instead of calling the store, or
  // damage done to the files before the store is called.
  std::optional<common::Error> before(StoreCall call) {
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
        return common::make_error(fault.code, "injected fault: call " + std::to_string(number) + " of store call " +
                                                  std::to_string(index(call)) + " fails");
      case Kind::corrupt: overwrite_pages_after_the_first(m_database); return std::nullopt;
      case Kind::delete_files:
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(m_database.string() + suffix);
        return std::nullopt;
    }
    return std::nullopt;
  }

  daemon::store::SqliteStore& m_real;
  const std::filesystem::path m_database;
  mutable std::mutex m_mutex;
  std::array<unsigned, k_store_call_count> m_calls{};
  std::array<Fault, k_store_call_count> m_faults{};
};

}  // namespace jitcache::testing
