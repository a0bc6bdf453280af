#include <daemon/store/recovering_store.hpp>

#include <spdlog/spdlog.h>

#include <filesystem>
#include <system_error>
#include <type_traits>
#include <utility>

#include <daemon/store/set_aside.hpp>

namespace jitcache::daemon::store {

using proto::ErrorCode;

namespace {

// The counters a replaced store had gathered in memory, added onto those of earlier ones. The hot
// cache's bytes and entries are not: they describe what is cached now.
void carry(Totals& into, const Totals& from) {
  into.corrupt_entries += from.corrupt_entries;
  into.hot_cache_hits += from.hot_cache_hits;
  into.hot_cache_misses += from.hot_cache_misses;
  into.evictions += from.evictions;
  into.quota_evictions += from.quota_evictions;
  into.evicted_bytes += from.evicted_bytes;
  into.usage_dropped += from.usage_dropped;
}

Result<std::unique_ptr<SqliteStore>> open_fresh(const SqliteStoreOptions& options, const Error& cause) {
  // A retry after a reset that could not open the new store: the damaged file is gone already.
  std::error_code ec;
  if (!std::filesystem::exists(options.path, ec)) return SqliteStore::open(options);
  auto moved = set_aside_database(options.path, std::chrono::system_clock::now());
  if (!moved) return moved.error();
  spdlog::error("store: the database {} is corrupt ({}); it was moved aside to {} for inspection and an empty "
                "store replaces it (docs/operations.md \"Corruption\")",
                options.path.string(), cause.message, moved->string());
  return SqliteStore::open(options);
}

// Whatever is at the path now: a database to open, nothing (a new one is made), or a corrupt file
// (set aside).
Result<std::unique_ptr<SqliteStore>> open_at_path(const SqliteStoreOptions& options) {
  auto store = SqliteStore::open(options);
  if (!store && store.error().code == ErrorCode::corrupt) store = open_fresh(options, store.error());
  return store;
}

std::shared_ptr<const DatabaseFiles> watch(const SqliteStoreOptions& options) {
  return std::make_shared<const DatabaseFiles>(DatabaseFiles::snapshot(options.path));
}

}  // namespace

Result<std::unique_ptr<RecoveringStore>> RecoveringStore::open(SqliteStoreOptions options) {
  options.quick_check_at_open = true;
  auto store = open_at_path(options);
  if (!store) return store.error();
  return std::unique_ptr<RecoveringStore>(new RecoveringStore(std::move(options), std::move(*store)));
}

RecoveringStore::RecoveringStore(SqliteStoreOptions options, std::unique_ptr<SqliteStore> store)
    : m_options(std::move(options)), m_store(std::move(store)), m_files(watch(m_options)) {}

template <class F>
auto RecoveringStore::call(F&& fn) -> decltype(fn(std::declval<SqliteStore&>())) {
  SqliteStore* store = nullptr;
  std::uint64_t generation = 0;
  {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [this] { return !m_resetting; });
    ++m_active;
    store = m_store.get();
    generation = m_generation;
  }
  auto result = [&]() -> decltype(fn(std::declval<SqliteStore&>())) {
    if (store == nullptr) {
      return proto::make_error(ErrorCode::corrupt, "the store database could not be recreated after a corruption");
    }
    return fn(*store);
  }();
  {
    std::lock_guard lock(m_mutex);
    if (--m_active == 0) m_changed.notify_all();
  }
  if (!result && result.error().code == ErrorCode::corrupt) reset(generation, ResetKind::corrupt, result.error());
  return result;
}

template <class F>
auto RecoveringStore::write_call(F&& fn) -> decltype(fn(std::declval<SqliteStore&>())) {
  check_files();
  return call(std::forward<F>(fn));
}

void RecoveringStore::check_files() {
  std::shared_ptr<const DatabaseFiles> files;
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(m_mutex);
    if (m_resetting) return;
    files = m_files;
    generation = m_generation;
  }
  if (auto change = files->changed()) {
    reset(generation, ResetKind::files_lost, proto::make_error(ErrorCode::io, *change));
  }
}

void RecoveringStore::reset(std::uint64_t generation, ResetKind kind, const Error& cause) {
  std::unique_ptr<SqliteStore> old;
  {
    std::unique_lock lock(m_mutex);
    // Another call already replaced the store this one failed on, or is doing so now.
    if (generation != m_generation || m_resetting) return;
    m_resetting = true;
    m_changed.wait(lock, [this] { return m_active == 0; });
    old = std::move(m_store);
  }
  // The gate is closed and empty: nothing else touches a store until it reopens.
  if (old) {
    carry(m_carried, old->session_counters());
    if (kind == ResetKind::files_lost) old->leave_files_at_close();
    old.reset();  // closes the writer and every reader of the damaged file
  }
  Result<std::unique_ptr<SqliteStore>> fresh = std::unique_ptr<SqliteStore>();
  if (kind == ResetKind::corrupt) {
    fresh = open_fresh(m_options, cause);
    if (!fresh) spdlog::error("store: could not replace the corrupt database: {}", fresh.error().message);
  } else {
    std::error_code ec;
    const bool there = std::filesystem::exists(m_options.path, ec);
    spdlog::error("store: {} while jitcached was running: what was written since went to files that are no "
                  "longer at their paths, and is lost; the store is reopened on {} (docs/operations.md "
                  "\"The state directory\")",
                  cause.message, there ? "the database now at " + m_options.path.string()
                                       : "a new, empty database at " + m_options.path.string());
    fresh = open_at_path(m_options);
    if (!fresh) spdlog::error("store: could not reopen the database: {}", fresh.error().message);
  }
  RowDropped listener;
  {
    std::lock_guard lock(m_mutex);
    if (fresh) {
      m_store = std::move(*fresh);
      if (m_row_dropped) m_store->on_row_dropped(m_row_dropped);
    }
    m_files = watch(m_options);
    ++(kind == ResetKind::corrupt ? m_resets : m_reopens);
    ++m_generation;
    m_resetting = false;
    listener = m_row_dropped;
  }
  m_changed.notify_all();
  // Rationale: after the gate has reopened, because the listener (the publisher) may hold its own
  // lock while it waits in the gate to ask the store about a row; told inside, both would wait.
  if (listener) listener(k_every_row);
}

Result<std::optional<StoredImage>> RecoveringStore::lookup(const proto::Digest256& key_id, const Visibility& who) {
  return call([&](SqliteStore& s) { return s.lookup(key_id, who); });
}

Result<std::optional<StoredImage>> RecoveringStore::lookup_explained(const proto::Digest256& key_id,
                                                                     const Visibility& who, MissReason& why) {
  return call([&](SqliteStore& s) { return s.lookup_explained(key_id, who, why); });
}

Result<std::optional<StoredImage>> RecoveringStore::lookup_fast(const proto::Digest256& fast_key_id,
                                                                const Visibility& who) {
  return call([&](SqliteStore& s) { return s.lookup_fast(fast_key_id, who); });
}

Result<std::optional<StoredImage>> RecoveringStore::lookup_prefix(const std::string& prefix, const Visibility& who) {
  return call([&](SqliteStore& s) { return s.lookup_prefix(prefix, who); });
}

Result<NamespaceTotals> RecoveringStore::namespace_totals(unsigned top) {
  return call([&](SqliteStore& s) { return s.namespace_totals(top); });
}

Result<PutOutcome> RecoveringStore::put(const PutInput& input) {
  return write_call([&](SqliteStore& s) { return s.put(input); });
}

Result<ListPage> RecoveringStore::list(const ListQuery& query, const Visibility& who) {
  return call([&](SqliteStore& s) { return s.list(query, who); });
}

Result<std::uint32_t> RecoveringStore::remove(const std::string& prefix, const Visibility& who) {
  return write_call([&](SqliteStore& s) { return s.remove(prefix, who); });
}

Result<Totals> RecoveringStore::totals() {
  auto totals = call([&](SqliteStore& s) { return s.totals(); });
  if (!totals) return totals;
  std::lock_guard lock(m_mutex);
  carry(*totals, m_carried);
  totals->store_resets = m_resets;
  totals->store_reopens = m_reopens;
  return totals;
}

Result<std::optional<ReportOutcome>> RecoveringStore::report_failure(const proto::Digest256& key_id,
                                                                     const Visibility& who,
                                                                     const FailureReport& report) {
  return write_call([&](SqliteStore& s) { return s.report_failure(key_id, who, report); });
}

Result<void> RecoveringStore::flush_usage() {
  return write_call([&](SqliteStore& s) { return s.flush_usage(); });
}

void RecoveringStore::note_driver_asked(std::uint32_t driver_api, const std::string& driver_build) {
  // Memory only, never fails: a Result so that call() can be used.
  (void)call([&](SqliteStore& s) -> Result<void> {
    s.note_driver_asked(driver_api, driver_build);
    return {};
  });
}

Result<GcOutcome> RecoveringStore::collect_garbage() {
  return write_call([&](SqliteStore& s) { return s.collect_garbage(); });
}

Result<std::string> RecoveringStore::integrity_check() {
  return call([&](SqliteStore& s) { return s.integrity_check(); });
}

Result<VerifyBatch> RecoveringStore::verify_entries(std::int64_t after_id, unsigned limit) {
  return call([&](SqliteStore& s) { return s.verify_entries(after_id, limit); });
}

Result<std::optional<proto::EntryInfo>> RecoveringStore::publishable_entry(std::int64_t row_id,
                                                                          const proto::Digest256& fast_key_id) {
  return call([&](SqliteStore& s) { return s.publishable_entry(row_id, fast_key_id); });
}

Result<std::optional<proto::EntryInfo>> RecoveringStore::note_published_hit(const proto::Digest256& fast_key_id) {
  return call([&](SqliteStore& s) { return s.note_published_hit(fast_key_id); });
}

void RecoveringStore::on_row_dropped(RowDropped listener) {
  std::lock_guard lock(m_mutex);
  m_row_dropped = std::move(listener);
  if (m_store) m_store->on_row_dropped(m_row_dropped);
}

}  // namespace jitcache::daemon::store
