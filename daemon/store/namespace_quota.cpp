#include <daemon/store/namespace_quota.hpp>

#include <daemon/store/evicted_entries.hpp>

#include <algorithm>
#include <common/result.hpp>
#include <vector>

namespace jitcache::daemon::store {

namespace {

constexpr char k_namespace_bytes_sql[] = "SELECT bytes_stored FROM namespace_totals WHERE namespace = ?1";
// entries_by_namespace narrows to the namespace; a namespace within its quota is small enough
// that sorting its rows by last use costs less than an index kept for this alone.
constexpr char k_candidates_sql[] =
    "SELECT id, stored_size FROM entries WHERE namespace = ?1 ORDER BY last_used_at_ms, id LIMIT 256";

}  // namespace

Result<std::uint64_t> namespace_bytes(SqliteDb& db, std::uint32_t namespace_id) {
  auto stmt = db.statement(k_namespace_bytes_sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind(1, namespace_id);
  auto row = (*stmt)->step("reading the size of namespace " + std::to_string(namespace_id));
  JITCACHE_TRY(row);
  return *row ? static_cast<std::uint64_t>((*stmt)->column_int64(0)) : std::uint64_t{0};
}

Result<EvictionResult> evict_over_quota(SqliteDb& writer, std::uint32_t namespace_id, std::uint64_t quota_bytes,
                                        std::uint64_t incoming_bytes) {
  EvictionResult result;
  auto size = namespace_bytes(writer, namespace_id);
  JITCACHE_TRY(size);
  std::uint64_t bytes = *size;
  if (quota_bytes == 0 || bytes + incoming_bytes <= quota_bytes) return result;
  const std::uint64_t low_water = low_water_bytes(quota_bytes);
  const std::uint64_t target = low_water > incoming_bytes ? low_water - incoming_bytes : 0;
  const std::string what = "evicting over the quota of namespace " + std::to_string(namespace_id);

  while (bytes > target) {
    // Read a batch, then delete it (eviction.cpp says why not while the SELECT walks).
    std::vector<std::pair<std::int64_t, std::uint64_t>> batch;
    {
      auto stmt = writer.statement(k_candidates_sql);
      JITCACHE_TRY(stmt);
      (*stmt)->bind(1, namespace_id);
      for (;;) {
        auto row = (*stmt)->step(what);
        JITCACHE_TRY(row);
        if (!*row) break;
        batch.emplace_back((*stmt)->column_int64(0), static_cast<std::uint64_t>((*stmt)->column_int64(1)));
      }
    }
    if (batch.empty()) break;
    for (const auto& [id, entry_bytes] : batch) {
      if (bytes <= target) break;
      JITCACHE_TRY(remove_evicted_entry(writer, id, EvictionReason::quota, result.evicted));
      if (writer.changes() == 0) continue;
      result.removed_ids.push_back(id);
      result.removed_bytes += entry_bytes;
      bytes -= std::min(bytes, entry_bytes);
    }
  }
  return result;
}

}  // namespace jitcache::daemon::store
