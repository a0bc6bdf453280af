// SqliteStore's capacity (Maintenance): the usage kept in memory and its flushes, eviction by the
// store-wide limit and stale drivers (eviction.hpp), eviction within a namespace's quota
// (namespace_quota.hpp), and GC.
#include <daemon/store/sqlite_store.hpp>

#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include <common/result.hpp>
#include <daemon/store/gdsf_priority.hpp>
#include <daemon/store/namespace_quota.hpp>

namespace jitcache::daemon::store {

namespace {

// Only the rows there are: a driver gets one when an entry of it is written (0006's triggers), so a
// driver asked for that no entry has, made up or not, writes nothing.
constexpr char k_flush_drivers_sql[] =
    "UPDATE drivers SET last_asked_at_ms = MAX(last_asked_at_ms, ?3) WHERE driver_api = ?1 AND driver_build = ?2";

// The priority from the hits as they become and L as it is (?5): a hit lifts its entry above what
// the last eviction left (gdsf_priority.hpp).
const std::string& flush_usage_sql() {
  static const std::string sql =
      "UPDATE entries SET hits = hits + ?1, last_used_at_ms = MAX(last_used_at_ms, ?2),"
      " priority = " +
      gdsf_priority_sql("?5", "hits + ?1") + " WHERE key_id = ?3 AND namespace = ?4";
  return sql;
}

}  // namespace

Result<void> SqliteStore::flush_usage() {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::flush_usage));
  return m_handle.run_write([this](StoreDatabase& db) {
    std::lock_guard lock(m_handle.writer_mutex());
    return flush_usage_locked(db);
  });
}

Result<void> SqliteStore::flush_usage_locked(StoreDatabase& db) {
  std::vector<UsageRecord> records = m_usage.take();
  std::vector<DriverAsk> asks = m_drivers.take();
  if (records.empty() && asks.empty()) return {};
  const std::string what = "writing the hits of " + std::to_string(records.size()) + " entries";

  auto write = [&]() -> Result<void> {
    auto transaction = Transaction::begin(db.writer, TransactionKind::immediate, what);
    JITCACHE_TRY(transaction);
    if (!records.empty()) {
      auto inflation = read_inflation(db.writer);
      JITCACHE_TRY(inflation);
      auto stmt = db.writer.statement(flush_usage_sql());
      JITCACHE_TRY(stmt);
      for (const auto& record : records) {
        (*stmt)->reset();
        (*stmt)->bind(1, static_cast<std::int64_t>(record.hits));
        (*stmt)->bind(2, record.last_used_at_ms);
        (*stmt)->bind_blob(3, record.key_id.bytes);
        (*stmt)->bind(4, record.namespace_id);
        (*stmt)->bind_double(5, *inflation);
        // An entry removed since its lookup simply matches no row.
        if (auto r = (*stmt)->run(what); !r) return r;
      }
    }
    if (!asks.empty()) {
      auto stmt = db.writer.statement(k_flush_drivers_sql);
      JITCACHE_TRY(stmt);
      for (const auto& ask : asks) {
        (*stmt)->reset();
        (*stmt)->bind(1, ask.driver_api);
        (*stmt)->bind_text(2, ask.driver_build);
        (*stmt)->bind(3, ask.last_asked_at_ms);
        if (auto r = (*stmt)->run(what); !r) return r;
      }
    }
    return transaction->commit(what);
  };
  auto written = write();
  if (!written) {
    m_usage.restore(records);
    m_drivers.restore(asks);
  } else if (!records.empty()) {
    // A remembered hit carries its entry's hits and last use as they were read: read them again.
    m_hot.forget_all_hits();
  }
  return written;
}

void SqliteStore::note_driver_asked(const AskedDriver& driver) {
  m_drivers.record_asked(driver.api, driver.build, m_clock());
}

void SqliteStore::note_served(const proto::EntryInfo& info) {
  const std::int64_t now = m_clock();
  m_usage.record(info.key_id, info.namespace_id, now);
  m_drivers.record_served(info.key.driver_api, info.key.driver_build, now);
}

Result<void> SqliteStore::evict_over_quota_locked(StoreDatabase& db, std::uint32_t namespace_id,
                                                  std::uint64_t incoming_bytes) {
  auto bytes = namespace_charge(db.writer, namespace_id);
  JITCACHE_TRY(bytes);
  if (*bytes + incoming_bytes <= m_namespace_quota) return {};
  // As evict_locked: the namespace's hits so far order its entries.
  JITCACHE_TRY(flush_usage_locked(db));
  const std::string what = "evicting over the quota of namespace " + std::to_string(namespace_id);
  auto transaction = Transaction::begin(db.writer, TransactionKind::immediate, what);
  JITCACHE_TRY(transaction);
  auto result = evict_over_quota(db.writer, namespace_id, m_namespace_quota, incoming_bytes);
  JITCACHE_TRY(result);
  if (result->removed_ids.empty()) return {};
  JITCACHE_TRY(transaction->commit(what));
  for (std::int64_t id : result->removed_ids) drop_row(id);
  m_recent_evictions.record(result->evicted, m_clock());
  m_quota_evictions.fetch_add(result->removed_ids.size(), std::memory_order_relaxed);
  spdlog::info("store: namespace {} reached its quota: evicted {} entries ({} bytes stored)", namespace_id,
               result->removed_ids.size(), result->removed_bytes);
  return {};
}

Result<void> SqliteStore::evict_own_first_locked(StoreDatabase& db, std::uint32_t namespace_id,
                                                 std::uint64_t incoming_bytes) {
  auto bytes = stored_bytes(db.writer);
  JITCACHE_TRY(bytes);
  if (!over_limit(m_policy, *bytes, incoming_bytes)) return {};
  JITCACHE_TRY(flush_usage_locked(db));
  const std::string what = "evicting namespace " + std::to_string(namespace_id) + "'s own entries for its write";
  auto transaction = Transaction::begin(db.writer, TransactionKind::immediate, what);
  JITCACHE_TRY(transaction);
  const std::uint64_t target = low_water_bytes(m_policy.max_size_bytes);
  const std::uint64_t to_free = *bytes + incoming_bytes > target ? *bytes + incoming_bytes - target : 0;
  auto result = evict_from_namespace(db.writer, namespace_id, to_free, EvictionReason::size, false);
  JITCACHE_TRY(result);
  if (result->removed_ids.empty()) return {};
  JITCACHE_TRY(transaction->commit(what));
  for (std::int64_t id : result->removed_ids) drop_row(id);
  m_recent_evictions.record(result->evicted, m_clock());
  m_evictions.fetch_add(result->removed_ids.size(), std::memory_order_relaxed);
  m_evicted_bytes.fetch_add(result->removed_bytes, std::memory_order_relaxed);
  spdlog::info("store: namespace {} wrote over max_size: evicted {} of its own entries ({} bytes stored)", namespace_id,
               result->removed_ids.size(), result->removed_bytes);
  return {};
}

Result<EvictionResult> SqliteStore::evict_locked(StoreDatabase& db, const EvictionRequest& request) {
  // Rationale: the size is checked before anything is flushed, so a PUT under the limit costs one
  // read of the totals row, and hits still become writes only every usage_flush_interval.
  if (!request.all_stale) {
    auto bytes = stored_bytes(db.writer);
    JITCACHE_TRY(bytes);
    if (!over_limit(m_policy, *bytes, request.incoming_bytes)) return EvictionResult{};
  }
  JITCACHE_TRY(flush_usage_locked(db));
  const std::string what = "evicting entries";
  auto transaction = Transaction::begin(db.writer, TransactionKind::immediate, what);
  JITCACHE_TRY(transaction);
  auto result = evict(db.writer, m_policy, request, m_clock());
  JITCACHE_TRY(result);
  if (result->removed_ids.empty()) return result;
  JITCACHE_TRY(transaction->commit(what));
  for (std::int64_t id : result->removed_ids) drop_row(id);
  m_recent_evictions.record(result->evicted, m_clock());
  m_evictions.fetch_add(result->removed_ids.size(), std::memory_order_relaxed);
  m_evicted_bytes.fetch_add(result->removed_bytes, std::memory_order_relaxed);
  spdlog::info("store: evicted {} entries ({} bytes; {} of a stale driver)", result->removed_ids.size(),
               result->removed_bytes, result->stale_entries);
  return result;
}

Result<GcOutcome> SqliteStore::collect_garbage() {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::collect_garbage));
  return m_handle.run_write([this](StoreDatabase& db) -> Result<GcOutcome> {
    GcOutcome outcome;
    {
      std::lock_guard lock(m_handle.writer_mutex());
      auto evicted = evict_locked(db, EvictionRequest{0, true});
      JITCACHE_TRY(evicted);
      outcome.evicted_entries = evicted->removed_ids.size();
      outcome.evicted_bytes = evicted->removed_bytes;
      outcome.stale_entries = evicted->stale_entries;
    }
    auto now = totals_of(db);
    JITCACHE_TRY(now);
    outcome.entries = now->entries;
    outcome.bytes_stored = now->bytes_stored;
    return outcome;
  });
}

}  // namespace jitcache::daemon::store
