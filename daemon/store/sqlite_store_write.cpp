// SqliteStore's writes of entries (Store::put, Store::remove), on the single writer.
#include <daemon/store/sqlite_store.hpp>

#include <string>
#include <vector>

#include <common/result.hpp>
#include <daemon/store/entry_row.hpp>
#include <daemon/store/gdsf_priority.hpp>
#include <daemon/store/key_id_range.hpp>
#include <daemon/store/namespace_quota.hpp>
#include <daemon/store/prefix_match.hpp>

namespace jitcache::daemon::store {

using common::ErrorCode;
using common::make_error;

namespace {

constexpr char k_find_entry_sql[] = "SELECT id FROM entries WHERE key_id = ?1 AND namespace = ?2";
// The same 19 parameters for both, so one function binds them. A replacement is a new image, so it
// is live again; load_failures stays, as the history of the key in this namespace. Its priority
// (?19) starts again from no hits (gdsf_priority.hpp).
constexpr char k_insert_entry_sql[] =
    "INSERT INTO entries (key_id, namespace, key_schema, content_digest, arch, driver_api, driver_build, options,"
    " producer, codec, raw_size, stored_size, checksum, created_at_ms, last_used_at_ms, hits, compile_time_us,"
    " content_fast, fast_key_id, priority)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 0, ?16, ?17, ?18, ?19)";
constexpr char k_replace_entry_sql[] =
    "UPDATE entries SET key_schema = ?3, content_digest = ?4, arch = ?5, driver_api = ?6, driver_build = ?7,"
    " options = ?8, producer = ?9, codec = ?10, raw_size = ?11, stored_size = ?12, checksum = ?13,"
    " created_at_ms = ?14, last_used_at_ms = ?15, hits = 0, compile_time_us = ?16,"
    " content_fast = ?17, fast_key_id = ?18, priority = ?19,"
    " quarantined_at_ms = NULL, quarantine_result = NULL, quarantine_stage = NULL,"
    " quarantine_reporter_uid = NULL, quarantine_detail = NULL"
    " WHERE key_id = ?1 AND namespace = ?2";
constexpr char k_store_blob_sql[] =
    "INSERT INTO blobs (entry_id, data) VALUES (?1, ?2) ON CONFLICT (entry_id) DO UPDATE SET data = excluded.data";

// RETURNING: the removed rows' ids, whose cached images must go too.
constexpr char k_remove_sql[] =
    "DELETE FROM entries WHERE key_id >= ?1 AND key_id < ?2 AND (?3 = 1 OR (namespace = ?4 AND ?4 <> 0))"
    " RETURNING id, namespace, key_id";
// Rationale: a removal from the shared namespace is remembered (schema/0011_removed_keys.sql), so
// that no import brings the entry back (sqlite_entry_transfer.cpp); a uid's own entries are its
// business, and its imports may bring them back.
constexpr char k_remember_removal_sql[] =
    "INSERT INTO removed_keys (key_id, removed_at_ms) VALUES (?1, ?2)"
    " ON CONFLICT (key_id) DO UPDATE SET removed_at_ms = excluded.removed_at_ms";

}  // namespace

Result<PutOutcome> SqliteStore::put(const PutInput& input) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::put));
  PutOutcome outcome;
  outcome.key_id = proto::key_id(input.key);
  const proto::Digest256 fast_key_id = proto::fast_key_id(proto::fast_key_of(input.key, input.content_fast));
  // The checksum covers the raw image, whatever the codec (docs/entry-format.md).
  const proto::Checksum128 checksum = proto::xxh3_128(input.image);
  // Rationale: compressed here, before the writer lock, so one PUT's zstd run never makes other
  // writers wait; only the SQLite writes happen under the lock.
  const EncodedImage encoded = encode_image(input.image, m_compression_level);
  const proto::Bytes stored =
      encoded.codec == Codec::raw ? input.image : proto::Bytes(encoded.compressed.data(), encoded.compressed.size());
  const auto raw_size = static_cast<std::int64_t>(input.image.size());
  const auto stored_size = static_cast<std::int64_t>(stored.size());
  const std::int64_t now = m_clock();
  const std::string what = "storing " + describe_entry(outcome.key_id, input.namespace_id);
  // max_size counts stored bytes (eviction.hpp), so the limit is on what the image takes on disk.
  if (m_policy.max_size_bytes != 0 && stored.size() > m_policy.max_size_bytes) {
    return make_error(ErrorCode::too_large, what + ": the image takes " + std::to_string(stored.size()) +
                                                " bytes stored, more than the store's max_size of " +
                                                std::to_string(m_policy.max_size_bytes));
  }
  const bool quota_applies = m_namespace_quota != 0 && input.namespace_id != k_shared_namespace;
  if (quota_applies && quota_charge(stored.size()) > m_namespace_quota) {
    return make_error(ErrorCode::too_large, what + ": the image takes " + std::to_string(stored.size()) +
                                                " bytes stored and " + std::to_string(k_entry_overhead_bytes) +
                                                " bytes of entry, more than the namespace_quota of " +
                                                std::to_string(m_namespace_quota) + " bytes per uid");
  }
  const std::optional<EncodedSource> source = m_sources.encode(input);
  return m_handle.run_write([&](StoreDatabase& db) -> Result<PutOutcome> {
    std::lock_guard lock(m_handle.writer_mutex());
    if (quota_applies) {
      JITCACHE_TRY(evict_over_quota_locked(db, input.namespace_id, quota_charge(stored.size())));
    }
    if (m_policy.max_size_bytes != 0) {
      // Rationale: eviction commits before the PUT's own transaction starts, so a PUT that then
      // fails (a full disk) still leaves the store within its limit; the room made is not lost,
      // only early.
      if (input.namespace_id != k_shared_namespace) {
        JITCACHE_TRY(evict_own_first_locked(db, input.namespace_id, stored.size()));
      }
      JITCACHE_TRY(evict_locked(db, EvictionRequest{stored.size(), false}));
    }
    auto transaction = Transaction::begin(db.writer, TransactionKind::immediate, what);
    JITCACHE_TRY(transaction);

    std::optional<std::int64_t> existing;
    {
      auto stmt = db.writer.statement(k_find_entry_sql);
      JITCACHE_TRY(stmt);
      (*stmt)->bind_blob(1, outcome.key_id.bytes);
      (*stmt)->bind(2, input.namespace_id);
      auto row = (*stmt)->step(what);
      JITCACHE_TRY(row);
      if (*row) existing = (*stmt)->column_int64(0);
    }
    auto inflation = read_inflation(db.writer);
    JITCACHE_TRY(inflation);
    {
      auto stmt = db.writer.statement(existing ? k_replace_entry_sql : k_insert_entry_sql);
      JITCACHE_TRY(stmt);
      Statement& s = **stmt;
      s.bind_blob(1, outcome.key_id.bytes);
      s.bind(2, input.namespace_id);
      s.bind(3, input.key.key_schema);
      s.bind_blob(4, input.key.content.bytes);
      s.bind_text(5, input.key.arch);
      s.bind(6, input.key.driver_api);
      s.bind_text(7, input.key.driver_build);
      s.bind_text(8, input.key.options);
      s.bind_text(9, input.producer);
      s.bind(10, static_cast<std::int64_t>(encoded.codec));
      s.bind(11, raw_size);
      s.bind(12, stored_size);
      s.bind_blob(13, checksum.bytes);
      s.bind(14, now);
      s.bind(15, now);
      s.bind(16, static_cast<std::int64_t>(input.compile_time_us));
      s.bind_blob(17, input.content_fast.bytes);
      s.bind_blob(18, fast_key_id.bytes);
      s.bind_double(19, gdsf_priority(*inflation, 0, input.compile_time_us, stored.size(), input.namespace_id));
      JITCACHE_TRY(s.run(what));
    }
    const std::int64_t id = existing ? *existing : db.writer.last_insert_rowid();
    {
      auto stmt = db.writer.statement(k_store_blob_sql);
      JITCACHE_TRY(stmt);
      (*stmt)->bind(1, id);
      (*stmt)->bind_blob(2, stored);
      JITCACHE_TRY((*stmt)->run(what));
    }
    JITCACHE_TRY(transaction->commit(what));
    // A replaced row's cached image is stale. A new row may have the id of a row deleted earlier
    // (SQLite reuses the largest rowid after it is deleted); dropping that id too costs nothing.
    drop_row(id);
    // A LOOKUP by this fast key serves the newest shared row that has it: now this one.
    if (input.namespace_id == k_shared_namespace) m_hot.forget_selector(true, fast_key_id);
    outcome.replaced = existing.has_value();
    outcome.row_id = id;
    if (source) m_sources.keep_locked(db, id, *source);
    return outcome;
  });
}

Result<std::uint32_t> SqliteStore::remove(const std::string& prefix, const Visibility& who) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::remove));
  auto range = key_id_range(prefix, proto::k_min_key_id_prefix_length);
  JITCACHE_TRY(range);
  const std::string what = "removing key id prefix " + prefix;

  return m_handle.run_write([&](StoreDatabase& db) -> Result<std::uint32_t> {
    std::lock_guard lock(m_handle.writer_mutex());
    auto transaction = Transaction::begin(db.writer, TransactionKind::immediate, what);
    JITCACHE_TRY(transaction);
    auto match = match_prefix(db.writer, PrefixScope::removable, *range, who, what);
    JITCACHE_TRY(match);
    if (match->count == 0) return std::uint32_t{0};
    if (match->count > 1) return ambiguous_prefix(prefix);

    auto stmt = db.writer.statement(k_remove_sql);
    JITCACHE_TRY(stmt);
    (*stmt)->bind_blob(1, range->lo);
    (*stmt)->bind_blob(2, range->hi);
    (*stmt)->bind(3, who.trusted ? 1 : 0);
    (*stmt)->bind(4, who.own_namespace);
    std::vector<std::int64_t> removed_ids;
    std::vector<std::vector<std::uint8_t>> removed_shared;
    for (;;) {
      auto row = (*stmt)->step(what);
      JITCACHE_TRY(row);
      if (!*row) break;
      removed_ids.push_back((*stmt)->column_int64(0));
      if ((*stmt)->column_int64(1) == k_shared_namespace) {
        const proto::Bytes key_id = (*stmt)->column_blob(2);
        removed_shared.emplace_back(key_id.begin(), key_id.end());
      }
    }
    for (const auto& key_id : removed_shared) {
      auto remember = db.writer.statement(k_remember_removal_sql);
      JITCACHE_TRY(remember);
      (*remember)->bind_blob(1, proto::Bytes(key_id));
      (*remember)->bind(2, m_clock());
      JITCACHE_TRY((*remember)->run(what));
    }
    JITCACHE_TRY(transaction->commit(what));
    for (std::int64_t id : removed_ids) drop_row(id);
    return static_cast<std::uint32_t>(removed_ids.size());
  });
}

}  // namespace jitcache::daemon::store
