// SqliteEntryTransfer (sqlite_entry_transfer.hpp): bundles' exports (one snapshot on a connection
// of their own) and imports (one transaction on the writer).
#include <daemon/store/sqlite_entry_transfer.hpp>

#include <spdlog/spdlog.h>
#include <zstd.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <daemon/store/entry_row.hpp>
#include <daemon/store/image_codec.hpp>
#include <daemon/store/namespace_quota.hpp>
#include <daemon/store/pragmas.hpp>
#include <daemon/store/verified_image.hpp>
#include <proto/content_digest.hpp>

namespace jitcache::daemon::store {

using common::ErrorCode;
using common::make_error;

namespace {

const std::string k_export_filters =
    " FROM entries WHERE namespace IN (0, ?1) AND quarantined_at_ms IS NULL AND (?2 = '' OR arch = ?2)"
    " AND (?3 = 0 OR driver_api = ?3) AND (?4 = '' OR driver_build = ?4) AND created_at_ms >= ?5";
const std::string k_export_sql =
    std::string("SELECT ") + k_entry_columns + k_export_filters + " ORDER BY key_id, namespace";
const std::string k_export_key_sql =
    std::string("SELECT ") + k_entry_columns + k_export_filters + " AND key_id = ?6 ORDER BY namespace";

// The source kept for an entry (sqlite_sources.cpp), if any.
constexpr char k_entry_source_sql[] =
    "SELECT s.codec, s.raw_size, s.data FROM entry_sources AS es JOIN sources AS s ON s.id = es.source_id"
    " WHERE es.entry_id = ?1";

constexpr char k_find_entry_sql[] = "SELECT 1 FROM entries WHERE key_id = ?1 AND namespace = ?2";
constexpr char k_insert_entry_sql[] =
    "INSERT INTO entries (key_id, namespace, key_schema, content_digest, arch, driver_api, driver_build, options,"
    " producer, codec, raw_size, stored_size, checksum, created_at_ms, last_used_at_ms, hits, compile_time_us,"
    " content_fast, fast_key_id)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 0, ?16, ?17, ?18)";
constexpr char k_insert_blob_sql[] = "INSERT INTO blobs (entry_id, data) VALUES (?1, ?2)";
constexpr char k_find_removal_sql[] = "SELECT 1 FROM removed_keys WHERE key_id = ?1";
constexpr char k_forget_removal_sql[] = "DELETE FROM removed_keys WHERE key_id = ?1";

// Whether `namespace_id` holds an entry of `key_id`.
Result<bool> holds(SqliteDb& db, const proto::Digest256& key_id, std::uint32_t namespace_id, const std::string& what) {
  auto stmt = db.statement(k_find_entry_sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind_blob(1, key_id.bytes);
  (*stmt)->bind(2, namespace_id);
  return (*stmt)->step(what);
}

// Whether an operator removed `key_id` from the shared namespace (schema/0011_removed_keys.sql).
Result<bool> was_removed(SqliteDb& db, const proto::Digest256& key_id, const std::string& what) {
  auto stmt = db.statement(k_find_removal_sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind_blob(1, key_id.bytes);
  return (*stmt)->step(what);
}

// Every row the filter selects, each key id once (the shared row first), in key id order.
Result<void> for_each_selected(SqliteDb& db, const ExportFilter& filter,
                               const std::function<Result<void>(const EntryRow&)>& fn) {
  auto run = [&](Statement& s) -> Result<void> {
    s.bind(1, filter.who.own_namespace);
    s.bind_text(2, filter.arch);
    s.bind(3, filter.driver_api);
    s.bind_text(4, filter.driver_build);
    s.bind(5, filter.since_ms);
    std::optional<proto::Digest256> last;
    for (;;) {
      auto has_row = s.step("exporting entries");
      JITCACHE_TRY(has_row);
      if (!*has_row) return {};
      auto row = read_entry_row(s);
      if (!row) return make_error(ErrorCode::corrupt, "exporting entries: a row has a field of the wrong size");
      if (last && *last == row->info.key_id) continue;
      last = row->info.key_id;
      JITCACHE_TRY(fn(*row));
    }
  };
  if (filter.key_ids.empty()) {
    auto stmt = db.statement(k_export_sql);
    JITCACHE_TRY(stmt);
    return run(**stmt);
  }
  for (const proto::Digest256& id : filter.key_ids) {
    auto stmt = db.statement(k_export_key_sql);
    JITCACHE_TRY(stmt);
    (*stmt)->bind_blob(6, id.bytes);
    JITCACHE_TRY(run(**stmt));
  }
  return {};
}

// The entry's kept source as a bundle carries it (docs/bundle-format.md): one zstd frame and its raw
// size; nothing when none is kept. A source that does not decode to the entry's content is left out
// (and logged), never handed on signed; the entry itself still goes.
Result<void> add_kept_source(SqliteDb& db, const EntryRow& row, bundle::BundleEntry& entry) {
  auto stmt = db.statement(k_entry_source_sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind(1, row.id);
  auto has_row = (*stmt)->step("exporting a kept source");
  JITCACHE_TRY(has_row);
  if (!*has_row) return {};
  const auto codec = static_cast<std::uint8_t>((*stmt)->column_int64(0));
  const auto raw_size = static_cast<std::uint64_t>((*stmt)->column_int64(1));
  const proto::Bytes stored = (*stmt)->column_blob(2);
  auto decoded = decode_image(codec, ImageBuffer(stored.begin(), stored.end()), raw_size);
  const auto* source = std::get_if<ImageBuffer>(&decoded);
  if (source == nullptr || proto::content_digest(proto::Bytes(*source)) != row.info.key.content) {
    spdlog::warn("store: the source kept for {} is damaged; exported without it",
                 describe_entry(row.info.key_id, row.info.namespace_id));
    return {};
  }
  if (codec == static_cast<std::uint8_t>(Codec::zstd)) {
    entry.source.assign(stored.begin(), stored.end());
  } else {
    // Kept raw because zstd saved nothing; the format wants one frame all the same.
    entry.source.resize(ZSTD_compressBound(source->size()));
    const std::size_t n = ZSTD_compress(entry.source.data(), entry.source.size(), source->data(), source->size(), 1);
    if (ZSTD_isError(n) != 0) {
      entry.source.clear();
      return {};
    }
    entry.source.resize(n);
  }
  entry.source_raw_size = raw_size;
  return {};
}

}  // namespace

SqliteEntryTransfer::SqliteEntryTransfer(StoreHandle& handle, EntryUpkeep& upkeep, std::uint64_t max_size_bytes,
                                         std::uint64_t namespace_quota_bytes, std::function<std::int64_t()> clock)
    : m_handle(handle),
      m_upkeep(upkeep),
      m_max_size_bytes(max_size_bytes),
      m_namespace_quota(namespace_quota_bytes),
      m_clock(std::move(clock)) {}

Result<std::uint64_t> SqliteEntryTransfer::export_entries(
    const ExportFilter& filter, const std::function<Result<void>(std::uint64_t)>& begin,
    const std::function<Result<void>(const bundle::BundleEntry&)>& each) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::export_entries));
  ExportFilter sorted = filter;
  std::sort(sorted.key_ids.begin(), sorted.key_ids.end());
  sorted.key_ids.erase(std::unique(sorted.key_ids.begin(), sorted.key_ids.end()), sorted.key_ids.end());
  return m_handle.run([&](StoreDatabase& db) -> Result<std::uint64_t> {
    // Rationale: a connection of its own, so an export of minutes holds none of the readers lookups
    // wait for; one deferred transaction, so the count and the entries come from one snapshot.
    auto connection = SqliteDb::open(db.writer.path(), OpenMode::read_write, db.writer.faults());
    JITCACHE_TRY(connection);
    JITCACHE_TRY(apply_pragmas(*connection, ConnectionRole::reader, PragmaOptions{}));
    auto transaction = Transaction::begin(*connection, TransactionKind::deferred, "exporting entries");
    JITCACHE_TRY(transaction);
    std::uint64_t count = 0;
    JITCACHE_TRY(for_each_selected(*connection, sorted, [&](const EntryRow&) -> Result<void> {
      ++count;
      return {};
    }));
    JITCACHE_TRY(begin(count));
    std::uint64_t written = 0;
    JITCACHE_TRY(for_each_selected(*connection, sorted, [&](const EntryRow& row) -> Result<void> {
      const std::string what = "exporting " + describe_entry(row.info.key_id, row.info.namespace_id);
      auto stored = connection->read_blob("blobs", "data", row.id, what);
      JITCACHE_TRY(stored);
      if (!*stored) return make_error(ErrorCode::corrupt, what + ": its image is missing");
      bundle::BundleEntry entry;
      entry.image.assign((*stored)->data(), (*stored)->data() + (*stored)->size());
      // The image goes as stored; checked first, so a damaged entry is not handed on signed.
      auto checked = verified_image(row.info, std::move(**stored));
      if (const auto* failure = std::get_if<DecodeFailure>(&checked)) {
        return make_error(ErrorCode::corrupt, what + ": " + failure->reason + " (jitcache verify removes it)");
      }
      // Rationale: only the shared namespace's entries are vouched for by this host's signature; one
      // of the caller's own namespace is that uid's word, and says so (docs/bundle-format.md).
      entry.origin = row.info.namespace_id == k_shared_namespace ? bundle::EntryOrigin::shared
                                                                 : bundle::EntryOrigin::caller_namespace;
      entry.key = row.info.key;
      entry.content_fast = row.content_fast;
      entry.producer = row.info.producer;
      entry.compile_time_us = row.info.compile_time_us;
      entry.created_at_ms = row.info.created_at_ms;
      entry.codec = row.info.codec;
      entry.raw_size = row.info.raw_size;
      entry.checksum = row.info.checksum;
      JITCACHE_TRY(add_kept_source(*connection, row, entry));
      JITCACHE_TRY(each(entry));
      ++written;
      return {};
    }));
    JITCACHE_TRY(transaction->commit("exporting entries"));
    return written;
  });
}

Result<KeyPresence> SqliteEntryTransfer::presence(std::uint32_t namespace_id, const proto::Digest256& key_id) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::presence));
  return m_handle.run([&](StoreDatabase& db) -> Result<KeyPresence> {
    auto reader = db.readers.acquire();
    const std::string what = "looking up a bundle entry's key id";
    auto present = holds(*reader, key_id, namespace_id, what);
    JITCACHE_TRY(present);
    if (*present) return KeyPresence::present;
    if (namespace_id != k_shared_namespace) return KeyPresence::absent;
    auto removed = was_removed(*reader, key_id, what);
    JITCACHE_TRY(removed);
    return *removed ? KeyPresence::removed : KeyPresence::absent;
  });
}

Result<ImportCounts> SqliteEntryTransfer::import_entries(
    const ImportOptions& options, const std::function<Result<std::optional<bundle::BundleEntry>>()>& next) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::import_entries));
  const std::uint32_t namespace_id = options.namespace_id;
  const std::uint64_t stored_bytes = options.stored_bytes;
  const std::string what = "importing a bundle into namespace " + std::to_string(namespace_id);
  if (m_max_size_bytes != 0 && stored_bytes > m_max_size_bytes) {
    return make_error(ErrorCode::too_large, what + ": its images take " + std::to_string(stored_bytes) +
                                                " bytes, more than the store's max_size of " +
                                                std::to_string(m_max_size_bytes));
  }
  const bool quota_applies = m_namespace_quota != 0 && namespace_id != k_shared_namespace;
  const std::uint64_t quota_bytes = stored_bytes + options.entry_count * k_entry_overhead_bytes;
  if (quota_applies && quota_bytes > m_namespace_quota) {
    return make_error(ErrorCode::too_large, what + ": its entries count " + std::to_string(quota_bytes) +
                                                " bytes (images and " + std::to_string(k_entry_overhead_bytes) +
                                                " per entry), more than the namespace_quota of " +
                                                std::to_string(m_namespace_quota) + " bytes per uid");
  }
  return m_handle.run_write([&](StoreDatabase& db) -> Result<ImportCounts> {
    std::lock_guard lock(m_handle.writer_mutex());
    // Room first, as a PUT makes it (sqlite_store_write.cpp): eviction commits on its own.
    JITCACHE_TRY(m_upkeep.make_room_locked(db, namespace_id, quota_bytes, stored_bytes));
    auto transaction = Transaction::begin(db.writer, TransactionKind::immediate, what);
    JITCACHE_TRY(transaction);
    ImportCounts counts;
    std::vector<std::int64_t> new_rows;
    std::vector<proto::Digest256> fast_key_ids;
    const std::int64_t now = m_clock();
    for (;;) {
      auto entry = next();
      JITCACHE_TRY(entry);
      if (!*entry) break;
      const bundle::BundleEntry& e = **entry;
      const proto::Digest256 key_id = proto::key_id(e.key);
      auto present = holds(db.writer, key_id, namespace_id, what);
      JITCACHE_TRY(present);
      if (*present) {
        ++counts.skipped;
        continue;
      }
      if (namespace_id == k_shared_namespace) {
        auto removed = was_removed(db.writer, key_id, what);
        JITCACHE_TRY(removed);
        if (*removed && !options.restore_removed) {
          ++counts.skipped;
          ++counts.removed;
          continue;
        }
        if (*removed) {
          auto forget = db.writer.statement(k_forget_removal_sql);
          JITCACHE_TRY(forget);
          (*forget)->bind_blob(1, key_id.bytes);
          JITCACHE_TRY((*forget)->run(what));
        }
      }
      const proto::Digest256 fast_key_id = proto::fast_key_id(proto::fast_key_of(e.key, e.content_fast));
      {
        auto stmt = db.writer.statement(k_insert_entry_sql);
        JITCACHE_TRY(stmt);
        Statement& s = **stmt;
        s.bind_blob(1, key_id.bytes);
        s.bind(2, namespace_id);
        s.bind(3, e.key.key_schema);
        s.bind_blob(4, e.key.content.bytes);
        s.bind_text(5, e.key.arch);
        s.bind(6, e.key.driver_api);
        s.bind_text(7, e.key.driver_build);
        s.bind_text(8, e.key.options);
        s.bind_text(9, e.producer);
        s.bind(10, static_cast<std::int64_t>(e.codec));
        s.bind(11, static_cast<std::int64_t>(e.raw_size));
        s.bind(12, static_cast<std::int64_t>(e.image.size()));
        s.bind_blob(13, e.checksum.bytes);
        // Rationale: created and last used now, not as on the exporting host: eviction orders by
        // use here, and an imported entry is as fresh as one just compiled.
        s.bind(14, now);
        s.bind(15, now);
        s.bind(16, static_cast<std::int64_t>(e.compile_time_us));
        s.bind_blob(17, e.content_fast.bytes);
        s.bind_blob(18, fast_key_id.bytes);
        JITCACHE_TRY(s.run(what));
      }
      const std::int64_t id = db.writer.last_insert_rowid();
      {
        auto stmt = db.writer.statement(k_insert_blob_sql);
        JITCACHE_TRY(stmt);
        (*stmt)->bind(1, id);
        (*stmt)->bind_blob(2, proto::Bytes(e.image));
        JITCACHE_TRY((*stmt)->run(what));
      }
      new_rows.push_back(id);
      if (namespace_id == k_shared_namespace) fast_key_ids.push_back(fast_key_id);
      ++counts.imported;
    }
    JITCACHE_TRY(transaction->commit(what));
    // As after a PUT: a reused row id's cached image is stale, and a LOOKUP by one of these fast
    // keys now serves the new shared row.
    m_upkeep.rows_written_locked(new_rows, fast_key_ids);
    return counts;
  });
}

}  // namespace jitcache::daemon::store
