// SqliteStore as the published images' source (PublishSource): which rows may be published, a hit
// of a published copy, and the notice of dropped rows.
#include <daemon/store/sqlite_store.hpp>

#include <string>
#include <utility>

#include <common/result.hpp>
#include <daemon/store/entry_row.hpp>

namespace jitcache::daemon::store {

using common::ErrorCode;
using common::make_error;

namespace {

// Only live entries of the shared namespace, found by row (and its fast key) or by fast key.
const std::string k_publishable_sql = std::string("SELECT ") + k_entry_columns +
                                      " FROM entries WHERE id = ?1 AND fast_key_id = ?2 AND namespace = 0"
                                      " AND quarantined_at_ms IS NULL";
const std::string k_published_hit_sql = std::string("SELECT ") + k_entry_columns +
                                        " FROM entries WHERE fast_key_id = ?1 AND namespace = 0"
                                        " AND quarantined_at_ms IS NULL ORDER BY id DESC LIMIT 1";

}  // namespace

void SqliteStore::on_row_dropped(RowDropped listener) {
  std::lock_guard lock(m_handle.writer_mutex());
  m_row_dropped = std::move(listener);
}

void SqliteStore::drop_row(std::int64_t id) {
  m_hot.invalidate(id);
  if (m_row_dropped) m_row_dropped(id);
}

Result<std::optional<EntryRow>> SqliteStore::read_row(StoreDatabase& db, const std::string& sql,
                                                      const std::function<void(Statement&)>& bind,
                                                      const std::string& what) {
  auto reader = db.readers.acquire();
  auto stmt = reader->statement(sql);
  JITCACHE_TRY(stmt);
  bind(**stmt);
  auto has_row = (*stmt)->step(what);
  JITCACHE_TRY(has_row);
  if (!*has_row) return std::optional<EntryRow>();
  auto row = read_entry_row(**stmt);
  if (!row)
    return make_error(ErrorCode::corrupt, what + ": an entries row has a key id, digest or checksum of the wrong size");
  return std::optional<EntryRow>(std::move(*row));
}

Result<std::optional<proto::EntryInfo>> SqliteStore::publishable_entry(std::int64_t row_id,
                                                                       const proto::Digest256& fast_key_id) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::publishable_entry));
  return m_handle.run([&](StoreDatabase& db) -> Result<std::optional<proto::EntryInfo>> {
    auto row = read_row(
        db, k_publishable_sql,
        [&](Statement& s) {
          s.bind(1, row_id);
          s.bind_blob(2, fast_key_id.bytes);
        },
        "checking row " + std::to_string(row_id) + " for publishing");
    JITCACHE_TRY(row);
    if (!row->has_value()) return std::optional<proto::EntryInfo>();
    return std::optional<proto::EntryInfo>(std::move((*row)->info));
  });
}

Result<std::optional<proto::EntryInfo>> SqliteStore::note_published_hit(const proto::Digest256& fast_key_id) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::note_published_hit));
  return m_handle.run([&](StoreDatabase& db) -> Result<std::optional<proto::EntryInfo>> {
    auto row = read_row(
        db, k_published_hit_sql, [&](Statement& s) { s.bind_blob(1, fast_key_id.bytes); },
        "noting a published hit of " + proto::to_hex(fast_key_id));
    JITCACHE_TRY(row);
    if (!row->has_value()) return std::optional<proto::EntryInfo>();
    note_served((*row)->info);
    return std::optional<proto::EntryInfo>(std::move((*row)->info));
  });
}

}  // namespace jitcache::daemon::store
