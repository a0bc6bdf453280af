#include <daemon/store/eviction.hpp>

#include <daemon/store/evicted_entries.hpp>

#include <algorithm>
#include <common/result.hpp>
#include <string>

#include <daemon/store/gdsf_priority.hpp>

namespace jitcache::daemon::store {

namespace {

// Rationale: candidates are read in batches and deleted after each batch is read, rather than
// deleted while the SELECT still walks the index, which SQLite leaves undefined for rows it has not
// reached yet.
constexpr std::int64_t k_batch_rows = 256;

constexpr char k_stored_bytes_sql[] = "SELECT bytes_stored FROM totals WHERE id = 0";

// Rationale: from the few stale rows of `drivers` into entries_by_driver, so the cost is that of the
// stale entries, not a walk of every entry with a subquery each (drivers has a row for every
// driver in entries: sync_drivers() at open).
constexpr char k_stale_candidates_sql[] =
    "SELECT e.id, e.stored_size, e.priority FROM drivers AS d JOIN entries AS e"
    " ON e.driver_api = d.driver_api AND e.driver_build = d.driver_build"
    " WHERE d.last_asked_at_ms < ?12 ORDER BY e.last_used_at_ms, e.id LIMIT ?1";
constexpr char k_lru_candidates_sql[] =
    "SELECT id, stored_size, priority FROM entries ORDER BY last_used_at_ms, id LIMIT ?1";
// entries_by_priority from its lowest end (fill_missing_priorities() left no NULL); ties, as LRU's,
// by row id.
constexpr char k_gdsf_candidates_sql[] = "SELECT id, stored_size, priority FROM entries ORDER BY priority, id LIMIT ?1";
constexpr char k_delete_sql[] = "DELETE FROM entries WHERE id = ?1";

struct Candidate {
  std::int64_t id = 0;
  std::uint64_t bytes = 0;
  double priority = 0;  // gdsf_priority.hpp
};

Result<std::vector<Candidate>> candidates(SqliteDb& db, std::string_view sql, std::int64_t cutoff_ms) {
  auto stmt = db.statement(sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind(1, k_batch_rows);
  if (sql == std::string_view(k_stale_candidates_sql)) (*stmt)->bind(12, cutoff_ms);
  std::vector<Candidate> out;
  for (;;) {
    auto row = (*stmt)->step("choosing entries to evict");
    JITCACHE_TRY(row);
    if (!*row) break;
    out.push_back(Candidate{(*stmt)->column_int64(0), static_cast<std::uint64_t>((*stmt)->column_int64(1)),
                            (*stmt)->column_double(2)});
  }
  return out;
}

}  // namespace

Result<void> remove_entry(SqliteDb& db, std::int64_t id) {
  auto stmt = db.statement(k_delete_sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind(1, id);
  return (*stmt)->run("evicting an entry");
}

const char k_stale_condition_sql[] =
    "EXISTS (SELECT 1 FROM drivers AS d WHERE d.driver_api = entries.driver_api"
    " AND d.driver_build = entries.driver_build AND d.last_asked_at_ms < ?12)";

Result<void> sync_drivers(SqliteDb& writer) {
  if (auto r = writer.exec(
          "INSERT OR IGNORE INTO drivers (driver_api, driver_build, last_asked_at_ms)"
          " SELECT driver_api, driver_build, MAX(last_used_at_ms) FROM entries GROUP BY driver_api, driver_build",
          "adding the drivers of entries an older jitcached wrote");
      !r) {
    return r;
  }
  return writer.exec(
      "DELETE FROM drivers WHERE NOT EXISTS (SELECT 1 FROM entries"
      " WHERE entries.driver_api = drivers.driver_api AND entries.driver_build = drivers.driver_build)",
      "deleting the drivers of no entry an older jitcached added");
}

std::uint64_t low_water_bytes(std::uint64_t max_size_bytes) {
  return max_size_bytes / 100 * k_low_water_percent + max_size_bytes % 100 * k_low_water_percent / 100;
}

Result<std::uint64_t> stored_bytes(SqliteDb& db) {
  auto stmt = db.statement(k_stored_bytes_sql);
  JITCACHE_TRY(stmt);
  auto row = (*stmt)->step("reading the store size");
  JITCACHE_TRY(row);
  if (!*row) return common::make_error(common::ErrorCode::corrupt, "the store's totals row is missing");
  return static_cast<std::uint64_t>((*stmt)->column_int64(0));
}

Result<EvictionResult> evict(SqliteDb& writer, const EvictionPolicy& policy, const EvictionRequest& request,
                             std::int64_t now_ms) {
  EvictionResult result;
  auto size = stored_bytes(writer);
  JITCACHE_TRY(size);
  std::uint64_t bytes = *size;
  const bool over = over_limit(policy, bytes, request.incoming_bytes);
  if (!over && !request.all_stale) return result;
  // Where a pass stops: under the low-water mark with room for the incoming bytes, or, when only
  // stale entries are asked for, never.
  const std::uint64_t low_water = low_water_bytes(policy.max_size_bytes);
  const std::uint64_t target =
      over ? (low_water > request.incoming_bytes ? low_water - request.incoming_bytes : 0) : bytes;

  // The priority of the last entry the pass removed: what the gdsf order raises L to.
  double last_priority = 0;
  auto run_pass = [&](std::string_view sql, bool stale, bool until_target) -> Result<void> {
    for (;;) {
      if (until_target && bytes <= target) return {};
      auto batch = candidates(writer, sql, now_ms - policy.stale_driver_after_ms);
      JITCACHE_TRY(batch);
      if (batch->empty()) return {};
      for (const Candidate& candidate : *batch) {
        if (until_target && bytes <= target) return {};
        const EvictionReason why = stale ? EvictionReason::stale_driver : EvictionReason::size;
        if (auto r = remove_evicted_entry(writer, candidate.id, why, result.evicted); !r) return r;
        if (writer.changes() == 0) continue;
        result.removed_ids.push_back(candidate.id);
        result.removed_bytes += candidate.bytes;
        bytes -= std::min(bytes, candidate.bytes);
        if (stale) ++result.stale_entries;
        last_priority = candidate.priority;
      }
    }
  };

  if (policy.stale_driver_after_ms > 0) {
    JITCACHE_TRY(run_pass(k_stale_candidates_sql, true, !request.all_stale));
  }
  if (over && policy.order == EvictionOrder::lru) {
    JITCACHE_TRY(run_pass(k_lru_candidates_sql, false, true));
  } else if (over) {
    auto inflation = read_inflation(writer);
    JITCACHE_TRY(inflation);
    JITCACHE_TRY(fill_missing_priorities(writer, *inflation));
    const std::size_t removed_before = result.removed_ids.size();
    JITCACHE_TRY(run_pass(k_gdsf_candidates_sql, false, true));
    if (result.removed_ids.size() > removed_before) {
      JITCACHE_TRY(raise_inflation(writer, last_priority));
    }
  }
  return result;
}

}  // namespace jitcache::daemon::store
