// SqliteStore's Diagnosis (diagnosis.hpp): the entries near a key for EXPLAIN, and the eviction
// ring.
//
// The entries of a key id (entries_by_key) or of a content digest (entries_by_content, schema
// 0008) are found through their indexes, SQLite's OR optimisation probing each, so EXPLAIN costs a
// few index probes on a read connection however big the store is.
#include <daemon/store/sqlite_store.hpp>

#include <string>

#include <common/result.hpp>
#include <daemon/store/entry_row.hpp>

namespace jitcache::daemon::store {

using common::ErrorCode;
using common::make_error;

namespace {

// ?1 key id, ?2 content digest, ?3 the caller's uid (its failure reports), ?4 the row limit.
const std::string k_near_columns =
    std::string(k_entry_columns) +
    ", quarantine_result, quarantine_stage, quarantine_reporter_uid, quarantine_detail,"
    " (SELECT reported_at_ms FROM failure_reports WHERE entry_id = entries.id AND reporter_uid = ?3),"
    " (SELECT cu_result FROM failure_reports WHERE entry_id = entries.id AND reporter_uid = ?3),"
    " (SELECT stage FROM failure_reports WHERE entry_id = entries.id AND reporter_uid = ?3)";
constexpr int k_quarantine_column = 20;  // the first after k_entry_columns
const std::string k_near_by_key_sql =
    "SELECT " + k_near_columns + " FROM entries WHERE key_id = ?1 AND ?2 IS NULL ORDER BY namespace LIMIT ?4";
const std::string k_near_by_content_sql = "SELECT " + k_near_columns +
                                          " FROM entries WHERE key_id = ?1 OR content_digest = ?2"
                                          " ORDER BY key_id = ?1 DESC, namespace, id LIMIT ?4";

}  // namespace

Result<std::vector<NearEntry>> SqliteStore::near_entries(const proto::Digest256& key_id,
                                                         const std::optional<proto::Digest256>& content,
                                                         std::uint32_t caller_uid, unsigned limit) {
  return m_database->run([&](StoreDatabase& db) -> Result<std::vector<NearEntry>> {
    auto reader = db.readers.acquire();
    auto stmt = reader->statement(content ? k_near_by_content_sql : k_near_by_key_sql);
    JITCACHE_TRY(stmt);
    Statement& s = **stmt;
    s.bind_blob(1, key_id.bytes);
    if (content) s.bind_blob(2, content->bytes);
    else s.bind_null(2);
    s.bind(3, caller_uid);
    s.bind(4, limit);
    std::vector<NearEntry> out;
    for (;;) {
      auto has_row = s.step("finding the entries near a key");
      JITCACHE_TRY(has_row);
      if (!*has_row) break;
      auto row = read_entry_row(s);
      if (!row) {
        return make_error(ErrorCode::corrupt,
                          "finding the entries near a key: a row has a key id, digest or checksum of the wrong size");
      }
      NearEntry near;
      near.info = std::move(row->info);
      constexpr int q = k_quarantine_column;
      near.quarantine_result = static_cast<std::uint32_t>(s.column_int64(q));
      near.quarantine_stage = static_cast<std::uint8_t>(s.column_int64(q + 1));
      near.quarantine_reporter_uid = static_cast<std::uint32_t>(s.column_int64(q + 2));
      near.quarantine_detail = s.column_is_null(q + 3) ? std::string() : s.column_text(q + 3);
      near.reported_by_caller = !s.column_is_null(q + 4);
      if (near.reported_by_caller) {
        near.reported_at_ms = s.column_int64(q + 4);
        near.reported_result = static_cast<std::uint32_t>(s.column_int64(q + 5));
        near.reported_stage = static_cast<std::uint8_t>(s.column_int64(q + 6));
      }
      out.push_back(std::move(near));
    }
    return out;
  });
}

std::vector<EvictedEntry> SqliteStore::recent_evictions(std::size_t limit, const Visibility& who) {
  return m_recent_evictions.newest(limit, who.trusted, who.own_namespace);
}

std::vector<EvictedEntry> SqliteStore::evictions_of(const proto::Digest256& key_id) {
  return m_recent_evictions.of_key(key_id);
}

}  // namespace jitcache::daemon::store
