// SqliteDiagnosis (sqlite_diagnosis.hpp): the entries near a key for EXPLAIN, and the eviction
// ring.
//
// Rationale: every query here is an index probe followed by a walk of at most its LIMIT rows in
// index order (no sort, no scan), so EXPLAIN costs the same however many entries share a content
// digest: the key's own rows through entries_by_key (key_id, namespace), the rows of its content
// through entries_by_content_namespace (content_digest, namespace, then the rowid; schema 0010).
// For an untrusted caller the namespaces it may not see are not read at all: what it is told cannot
// depend on them (docs/security.md "EXPLAIN"). tests/unit/test_daemon_store_explain_plan.cpp holds
// the plans and the step counts to this.
#include <daemon/store/sqlite_diagnosis.hpp>

#include <string>

#include <common/result.hpp>
#include <daemon/store/entry_row.hpp>
#include <daemon/store/near_entries_sql.hpp>

namespace jitcache::daemon::store {

using common::ErrorCode;
using common::make_error;

namespace {

// ?1 key id, ?2 content digest, ?3 the caller's uid (its failure reports), ?4 the row limit, ?5 a
// namespace.
const std::string k_near_columns =
    std::string(k_entry_columns) +
    ", quarantine_result, quarantine_stage, quarantine_reporter_uid, quarantine_detail,"
    " (SELECT reported_at_ms FROM failure_reports WHERE entry_id = entries.id AND reporter_uid = ?3),"
    " (SELECT cu_result FROM failure_reports WHERE entry_id = entries.id AND reporter_uid = ?3),"
    " (SELECT stage FROM failure_reports WHERE entry_id = entries.id AND reporter_uid = ?3)";
constexpr int k_quarantine_column = 20;  // the first after k_entry_columns

}  // namespace

const std::string k_near_key_sql =
    "SELECT " + k_near_columns + " FROM entries WHERE key_id = ?1 AND ?2 IS NULL ORDER BY namespace LIMIT ?4";
const std::string k_near_key_in_namespace_sql =
    "SELECT " + k_near_columns + " FROM entries WHERE key_id = ?1 AND namespace = ?5 AND ?2 IS NULL LIMIT ?4";
const std::string k_near_content_sql = "SELECT " + k_near_columns +
                                       " FROM entries INDEXED BY entries_by_content_namespace WHERE content_digest = ?2"
                                       " AND key_id <> ?1 ORDER BY namespace, id LIMIT ?4";
const std::string k_near_content_in_namespace_sql =
    "SELECT " + k_near_columns +
    " FROM entries INDEXED BY entries_by_content_namespace WHERE content_digest = ?2 AND namespace = ?5"
    " AND key_id <> ?1 ORDER BY id LIMIT ?4";

Result<std::vector<NearEntry>> SqliteDiagnosis::near_entries(const proto::Digest256& key_id,
                                                             const std::optional<proto::Digest256>& content,
                                                             const Visibility& who, std::uint32_t caller_uid,
                                                             unsigned limit) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::near_entries));
  return m_handle.run([&](StoreDatabase& db) -> Result<std::vector<NearEntry>> {
    auto reader = db.readers.acquire();
    std::vector<NearEntry> out;
    // One query's rows onto `out`, at most `rows` of them (its LIMIT).
    auto read = [&](const std::string& sql, const std::optional<proto::Digest256>& by_content,
                    std::optional<std::uint32_t> namespace_id, unsigned rows) -> Result<void> {
      auto stmt = reader->statement(sql);
      JITCACHE_TRY(stmt);
      Statement& s = **stmt;
      s.bind_blob(1, key_id.bytes);
      if (by_content) s.bind_blob(2, by_content->bytes);
      else s.bind_null(2);
      s.bind(3, caller_uid);
      s.bind(4, rows);
      if (namespace_id) s.bind(5, *namespace_id);
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
      return {};
    };
    if (who.trusted) {
      JITCACHE_TRY(read(k_near_key_sql, std::nullopt, std::nullopt, limit));
      if (content && out.size() < limit) {
        JITCACHE_TRY(read(k_near_content_sql, content, std::nullopt, limit - static_cast<unsigned>(out.size())));
      }
      return out;
    }
    // Untrusted: the shared namespace, then its own; nothing of any other namespace is read.
    std::vector<std::uint32_t> seen{k_shared_namespace};
    if (who.own_namespace != k_shared_namespace) seen.push_back(who.own_namespace);
    for (std::uint32_t ns : seen) {
      if (out.size() >= limit) break;
      JITCACHE_TRY(read(k_near_key_in_namespace_sql, std::nullopt, ns, 1));
    }
    if (content) {
      for (std::uint32_t ns : seen) {
        if (out.size() >= limit) break;
        JITCACHE_TRY(read(k_near_content_in_namespace_sql, content, ns, limit - static_cast<unsigned>(out.size())));
      }
    }
    return out;
  });
}

std::vector<EvictedEntry> SqliteDiagnosis::recent_evictions(std::size_t limit, const Visibility& who) {
  return m_evictions.newest(limit, who.trusted, who.own_namespace);
}

std::vector<EvictedEntry> SqliteDiagnosis::evictions_of(const proto::Digest256& key_id) {
  return m_evictions.of_key(key_id);
}

}  // namespace jitcache::daemon::store
