// SqliteStore: opening, what a swapped database makes it forget, the totals, and the upkeep it does
// for the classes beside it (entry_upkeep.hpp).
#include <daemon/store/sqlite_store.hpp>

#include <spdlog/spdlog.h>

#include <chrono>
#include <common/result.hpp>
#include <utility>

namespace jitcache::daemon::store {

using common::ErrorCode;
using common::make_error;

namespace {

// The quarantined count walks the partial index entries_quarantined, which holds only those rows.
constexpr char k_totals_sql[] =
    "SELECT entries, bytes_raw, bytes_stored,"
    " (SELECT COUNT(*) FROM entries WHERE quarantined_at_ms IS NOT NULL), sources, source_bytes"
    " FROM totals WHERE id = 0";

std::int64_t system_clock_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const SqliteStoreOptions& options) {
  auto database = RecoveringDatabase::open(options);
  JITCACHE_TRY(database);
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(*database), options));
}

SqliteStore::SqliteStore(std::unique_ptr<RecoveringDatabase> database, const SqliteStoreOptions& options)
    : m_handle(std::move(database), options.faults),
      m_policy{options.max_size_bytes, options.stale_driver_after.count(), options.eviction_order},
      m_compression_level(options.compression_level),
      m_namespace_quota(options.namespace_quota_bytes),
      m_report_quorum(options.report_quorum),
      m_clock(options.clock ? options.clock : std::function<std::int64_t()>(system_clock_ms)),
      m_hot(options.hot_cache_bytes),
      m_sources(m_handle, *this, options.source_budget_bytes, m_clock),
      m_transfer(m_handle, *this, options.max_size_bytes, options.namespace_quota_bytes, m_clock),
      m_diagnosis(m_handle, m_recent_evictions) {
  m_handle.set_swap_hooks(
      RecoveringDatabase::SwapHooks{[this] { forget_rows(); }, [this] { tell_every_row_dropped(); }});
}

SqliteStore::~SqliteStore() {
  m_handle.run_alone([this](StoreDatabase& db) {
    std::lock_guard lock(m_handle.writer_mutex());
    if (auto r = flush_usage_locked(db); !r) {
      spdlog::warn("store: usage (hits, last-used times) lost at close: {}", r.error().message);
    }
  });
}

void SqliteStore::forget_rows() {
  // The counters (corrupt entries, evictions, the hot cache's hits and misses) carry on: they are
  // the daemon's since it started, not the file's.
  m_hot.invalidate_all();
  (void)m_usage.take();
  (void)m_drivers.take();
}

void SqliteStore::tell_every_row_dropped() {
  RowDropped listener;
  {
    std::lock_guard lock(m_handle.writer_mutex());
    listener = m_row_dropped;
  }
  if (listener) listener(k_every_row);
}

Result<void> SqliteStore::make_room_locked(StoreDatabase& db, std::uint32_t namespace_id, std::uint64_t quota_bytes,
                                           std::uint64_t stored_bytes) {
  if (m_namespace_quota != 0 && namespace_id != k_shared_namespace) {
    JITCACHE_TRY(evict_over_quota_locked(db, namespace_id, quota_bytes));
  }
  if (m_policy.max_size_bytes != 0) {
    // An untrusted uid's size pressure is paid with its own entries first, by import as by PUT
    // (sqlite_store_write.cpp; tests/unit/test_daemon_store_import_own_first.cpp).
    if (namespace_id != k_shared_namespace) JITCACHE_TRY(evict_own_first_locked(db, namespace_id, stored_bytes));
    JITCACHE_TRY(evict_locked(db, EvictionRequest{stored_bytes, false}));
  }
  return {};
}

void SqliteStore::rows_written_locked(std::span<const std::int64_t> rows,
                                      std::span<const proto::Digest256> shared_fast_key_ids) {
  for (const std::int64_t id : rows) drop_row(id);
  for (const proto::Digest256& id : shared_fast_key_ids) m_hot.forget_selector(true, id);
}

Result<Totals> SqliteStore::totals() {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::totals));
  return m_handle.run([this](StoreDatabase& db) { return totals_of(db); });
}

Result<Totals> SqliteStore::totals_of(StoreDatabase& db) {
  auto reader = db.readers.acquire();
  auto stmt = reader->statement(k_totals_sql);
  JITCACHE_TRY(stmt);
  auto row = (*stmt)->step("reading the store totals");
  JITCACHE_TRY(row);
  if (!*row) return make_error(ErrorCode::corrupt, "the store's totals row is missing");
  Totals totals;
  totals.entries = static_cast<std::uint64_t>((*stmt)->column_int64(0));
  totals.bytes_raw = static_cast<std::uint64_t>((*stmt)->column_int64(1));
  totals.bytes_stored = static_cast<std::uint64_t>((*stmt)->column_int64(2));
  totals.entries_quarantined = static_cast<std::uint64_t>((*stmt)->column_int64(3));
  totals.sources = static_cast<std::uint64_t>((*stmt)->column_int64(4));
  totals.source_bytes = static_cast<std::uint64_t>((*stmt)->column_int64(5));
  totals.sources_dropped = m_sources.dropped();
  totals.corrupt_entries = m_corrupt_entries.load(std::memory_order_relaxed);
  const HotImageCacheStats hot = m_hot.stats();
  totals.hot_cache_hits = hot.hits;
  totals.hot_cache_misses = hot.misses;
  totals.hot_cache_bytes = hot.bytes;
  totals.hot_cache_entries = hot.entries;
  totals.max_size = m_policy.max_size_bytes;
  totals.evictions = m_evictions.load(std::memory_order_relaxed);
  totals.evicted_bytes = m_evicted_bytes.load(std::memory_order_relaxed);
  totals.quota_evictions = m_quota_evictions.load(std::memory_order_relaxed);
  totals.store_resets = m_handle.resets();
  totals.store_reopens = m_handle.reopens();
  totals.usage_pending = m_usage.pending() + m_drivers.pending();
  totals.usage_dropped = m_usage.dropped() + m_drivers.dropped();
  return totals;
}

}  // namespace jitcache::daemon::store
