#include <daemon/store/namespace_quota.hpp>

#include <daemon/store/evicted_entries.hpp>

#include <algorithm>
#include <common/result.hpp>
#include <vector>

namespace jitcache::daemon::store {

namespace {

constexpr char k_namespace_charge_sql[] =
    "SELECT bytes_stored + entries * ?2 FROM namespace_totals WHERE namespace = ?1";
// entries_by_namespace narrows to the namespace; a namespace within its quota is small enough
// that sorting its rows by last use costs less than an index kept for this alone.
constexpr char k_candidates_sql[] =
    "SELECT id, stored_size FROM entries WHERE namespace = ?1 ORDER BY last_used_at_ms, id LIMIT 256";

}  // namespace

Result<std::uint64_t> namespace_charge(SqliteDb& db, std::uint32_t namespace_id) {
  auto stmt = db.statement(k_namespace_charge_sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind(1, namespace_id);
  (*stmt)->bind(2, static_cast<std::int64_t>(k_entry_overhead_bytes));
  auto row = (*stmt)->step("reading the size of namespace " + std::to_string(namespace_id));
  JITCACHE_TRY(row);
  return *row ? static_cast<std::uint64_t>((*stmt)->column_int64(0)) : std::uint64_t{0};
}

Result<EvictionResult> evict_from_namespace(SqliteDb& writer, std::uint32_t namespace_id, std::uint64_t to_free,
                                            EvictionReason reason, bool count_overhead) {
  EvictionResult result;
  const std::string what = "evicting from namespace " + std::to_string(namespace_id);
  std::uint64_t freed = 0;
  while (freed < to_free) {
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
      if (freed >= to_free) break;
      JITCACHE_TRY(remove_evicted_entry(writer, id, reason, result.evicted));
      if (writer.changes() == 0) continue;
      result.removed_ids.push_back(id);
      result.removed_bytes += entry_bytes;
      freed += count_overhead ? quota_charge(entry_bytes) : entry_bytes;
    }
  }
  return result;
}

Result<EvictionResult> evict_over_quota(SqliteDb& writer, std::uint32_t namespace_id, std::uint64_t quota_bytes,
                                        std::uint64_t incoming_charge) {
  auto charge = namespace_charge(writer, namespace_id);
  JITCACHE_TRY(charge);
  if (quota_bytes == 0 || *charge + incoming_charge <= quota_bytes) return EvictionResult{};
  const std::uint64_t low_water = low_water_bytes(quota_bytes);
  const std::uint64_t target = low_water > incoming_charge ? low_water - incoming_charge : 0;
  return evict_from_namespace(writer, namespace_id, *charge > target ? *charge - target : 0, EvictionReason::quota,
                              true);
}

}  // namespace jitcache::daemon::store
