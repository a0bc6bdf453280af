#include <daemon/store/sqlite_store.hpp>

#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <daemon/store/entry_row.hpp>
#include <daemon/store/key_id_range.hpp>
#include <daemon/store/list_cursor.hpp>
#include <daemon/store/migrator.hpp>
#include <daemon/store/namespace_quota.hpp>
#include <daemon/store/pragmas.hpp>
#include <daemon/store/quarantine.hpp>
#include <daemon/store/verified_image.hpp>

namespace jitcache::daemon::store {

using proto::ErrorCode;
using proto::make_error;

namespace {

// A quarantined entry is never served: with the shared one quarantined, the caller's own live entry
// is. Nor is a shared entry the caller itself reported failing (quarantine.hpp); ?2 is the caller's
// namespace, its uid when untrusted, and the shared namespace (never a reporter) when trusted.
const std::string k_servable =
    " AND quarantined_at_ms IS NULL AND NOT (namespace = 0 AND EXISTS (SELECT 1 FROM failure_reports"
    " WHERE entry_id = entries.id AND reporter_uid = ?2))";
const std::string k_lookup_sql = std::string("SELECT ") + k_entry_columns +
                                 " FROM entries WHERE key_id = ?1 AND namespace IN (0, ?2)" + k_servable +
                                 " ORDER BY namespace ASC LIMIT 1";
// The same by fast key. Two live rows of one namespace share a fast key only if their sources
// collide under XXH3 (by accident or on purpose): the newest is offered, and the client's check of
// the content digest turns a wrong one into a lookup by key.
const std::string k_lookup_fast_sql = std::string("SELECT ") + k_entry_columns +
                                      " FROM entries WHERE fast_key_id = ?1 AND namespace IN (0, ?2)" + k_servable +
                                      " ORDER BY namespace ASC, id DESC LIMIT 1";
// After a miss by key: was there an entry, quarantined, or shared and reported by this caller (which
// is quarantined as far as it is concerned) (lookup_explained)?
constexpr char k_visible_quarantined_sql[] =
    "SELECT 1 FROM entries WHERE key_id = ?1 AND namespace IN (0, ?2) AND (quarantined_at_ms IS NOT NULL OR"
    " (namespace = 0 AND EXISTS (SELECT 1 FROM failure_reports WHERE entry_id = entries.id AND reporter_uid = ?2)))"
    " LIMIT 1";

// Distinct key ids under a prefix range within what a caller sees; LIMIT 2 is enough to tell
// "one" from "ambiguous".
constexpr char k_visible_key_ids_sql[] =
    "SELECT DISTINCT key_id FROM entries WHERE key_id >= ?1 AND key_id < ?2 AND namespace IN (0, ?3)"
    " ORDER BY key_id LIMIT 2";

// The same for what a caller may remove: ?3 trusted (everything), else only ?4, never the shared
// namespace.
constexpr char k_removable_key_ids_sql[] =
    "SELECT DISTINCT key_id FROM entries WHERE key_id >= ?1 AND key_id < ?2"
    " AND (?3 = 1 OR (namespace = ?4 AND ?4 <> 0)) ORDER BY key_id LIMIT 2";
// RETURNING: the removed rows' ids, whose cached images must go too.
constexpr char k_remove_sql[] =
    "DELETE FROM entries WHERE key_id >= ?1 AND key_id < ?2 AND (?3 = 1 OR (namespace = ?4 AND ?4 <> 0))"
    " RETURNING id";

// LIST. The position (?1, ?2) is the last row already returned (or just below the prefix range);
// ?3 is the range's upper end; ?4..?6 the field filters ('' / 0 = any); ?7 trusted, ?8 the
// caller's namespace; ?9 the row limit. Without a namespace filter the row-value comparison walks
// entries_by_key in (key_id, namespace) order; with one (?10), entries_by_namespace serves a plain
// key_id range, whose lower end the caller has already moved past the position.
const std::string k_list_filters =
    " AND (?4 = '' OR arch = ?4) AND (?5 = 0 OR driver_api = ?5) AND (?6 = '' OR driver_build = ?6)"
    " AND (?7 = 1 OR namespace IN (0, ?8)) AND (?11 = 0 OR " + std::string(k_stale_condition_sql) + ")";
const std::string k_list_sql = std::string("SELECT ") + k_entry_columns +
                               " FROM entries WHERE (key_id, namespace) > (?1, ?2) AND key_id < ?3" + k_list_filters +
                               " ORDER BY key_id, namespace LIMIT ?9";
const std::string k_list_namespace_sql = std::string("SELECT ") + k_entry_columns +
                                         " FROM entries WHERE namespace = ?10 AND key_id >= ?1 AND key_id < ?3" +
                                         k_list_filters + " ORDER BY key_id LIMIT ?9";

// Published images: only live entries of the shared namespace, found by row (and its fast key) or
// by fast key.
const std::string k_publishable_sql = std::string("SELECT ") + k_entry_columns +
                                      " FROM entries WHERE id = ?1 AND fast_key_id = ?2 AND namespace = 0"
                                      " AND quarantined_at_ms IS NULL";
const std::string k_published_hit_sql = std::string("SELECT ") + k_entry_columns +
                                        " FROM entries WHERE fast_key_id = ?1 AND namespace = 0"
                                        " AND quarantined_at_ms IS NULL ORDER BY id DESC LIMIT 1";

constexpr char k_find_entry_sql[] = "SELECT id FROM entries WHERE key_id = ?1 AND namespace = ?2";
// The same 18 parameters for both, so one function binds them. A replacement is a new image, so it
// is live again; load_failures stays, as the history of the key in this namespace. A replacement
// without a fast key keeps the row's: one key id means one source, so it still holds.
constexpr char k_insert_entry_sql[] =
    "INSERT INTO entries (key_id, namespace, key_schema, content_digest, arch, driver_api, driver_build, options,"
    " producer, codec, raw_size, stored_size, checksum, created_at_ms, last_used_at_ms, hits, compile_time_us,"
    " content_fast, fast_key_id)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 0, ?16, ?17, ?18)";
constexpr char k_replace_entry_sql[] =
    "UPDATE entries SET key_schema = ?3, content_digest = ?4, arch = ?5, driver_api = ?6, driver_build = ?7,"
    " options = ?8, producer = ?9, codec = ?10, raw_size = ?11, stored_size = ?12, checksum = ?13,"
    " created_at_ms = ?14, last_used_at_ms = ?15, hits = 0, compile_time_us = ?16,"
    " content_fast = COALESCE(?17, content_fast), fast_key_id = COALESCE(?18, fast_key_id),"
    " quarantined_at_ms = NULL, quarantine_result = NULL, quarantine_stage = NULL,"
    " quarantine_reporter_uid = NULL, quarantine_detail = NULL"
    " WHERE key_id = ?1 AND namespace = ?2";
constexpr char k_store_blob_sql[] =
    "INSERT INTO blobs (entry_id, data) VALUES (?1, ?2) ON CONFLICT (entry_id) DO UPDATE SET data = excluded.data";

// Only if it is still the row that failed: a PUT may have replaced it since it was read.
constexpr char k_delete_corrupt_sql[] =
    "DELETE FROM entries WHERE id = ?1 AND key_id = ?2 AND namespace = ?3 AND checksum = ?4";

// The quarantined count walks the partial index entries_quarantined, which holds only those rows.
constexpr char k_totals_sql[] =
    "SELECT entries, bytes_raw, bytes_stored,"
    " (SELECT COUNT(*) FROM entries WHERE quarantined_at_ms IS NOT NULL) FROM totals WHERE id = 0";

// Only the rows there are: a driver gets one when an entry of it is written (0006's triggers), so a
// driver asked for that no entry has, made up or not, writes nothing.
constexpr char k_flush_drivers_sql[] =
    "UPDATE drivers SET last_asked_at_ms = MAX(last_asked_at_ms, ?3) WHERE driver_api = ?1 AND driver_build = ?2";

constexpr char k_flush_usage_sql[] =
    "UPDATE entries SET hits = hits + ?1, last_used_at_ms = MAX(last_used_at_ms, ?2)"
    " WHERE key_id = ?3 AND namespace = ?4";

std::int64_t system_clock_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string describe(const proto::Digest256& key_id, std::uint32_t namespace_id) {
  return "entry " + proto::to_hex(key_id) + " in namespace " + std::to_string(namespace_id);
}

// SQLite's BLOB order: memcmp, then the shorter first.
bool blob_less(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

struct Position {
  std::vector<std::uint8_t> key_id;
  std::int64_t namespace_id = -1;  // below every namespace
};

bool position_less(const Position& a, const Position& b) {
  if (blob_less(a.key_id, b.key_id)) return true;
  if (blob_less(b.key_id, a.key_id)) return false;
  return a.namespace_id < b.namespace_id;
}

// How many distinct key ids `sql` finds under `range` (0, 1, or 2 meaning "more than one"), and
// the first of them.
struct PrefixMatch {
  int count = 0;
  proto::Digest256 key_id;
};

enum class Scope {
  visible,    // what a lookup sees
  removable,  // what a REMOVE may delete
};

Result<PrefixMatch> match_prefix(SqliteDb& db, Scope scope, const KeyIdRange& range, const Visibility& who,
                                 std::string_view what) {
  auto stmt = db.statement(scope == Scope::visible ? k_visible_key_ids_sql : k_removable_key_ids_sql);
  if (!stmt) return stmt.error();
  (*stmt)->bind_blob(1, range.lo);
  (*stmt)->bind_blob(2, range.hi);
  if (scope == Scope::visible) {
    (*stmt)->bind(3, who.own_namespace);
  } else {
    (*stmt)->bind(3, who.trusted ? 1 : 0);
    (*stmt)->bind(4, who.own_namespace);
  }
  PrefixMatch match;
  for (;;) {
    auto row = (*stmt)->step(what);
    if (!row) return row.error();
    if (!*row) break;
    proto::Bytes key_id = (*stmt)->column_blob(0);
    if (match.count == 0 && key_id.size() == match.key_id.bytes.size()) {
      std::copy(key_id.begin(), key_id.end(), match.key_id.bytes.begin());
    }
    ++match.count;
  }
  return match;
}

Error ambiguous(const std::string& prefix) {
  return make_error(ErrorCode::invalid_argument,
                    "key id prefix " + prefix + " is ambiguous: it matches more than one key id; give more digits");
}

}  // namespace

// --- opening ---

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const SqliteStoreOptions& options) {
  if (options.reader_count == 0) {
    return make_error(ErrorCode::invalid_argument, "the store needs at least one reader connection");
  }
  if (options.compression_level < 0 || options.compression_level > k_max_compression_level) {
    return make_error(ErrorCode::invalid_argument, "compression level " + std::to_string(options.compression_level) +
                                                       " is not within 0.." + std::to_string(k_max_compression_level));
  }
  const PragmaOptions pragmas{options.busy_timeout, options.cache_size_kib, options.reader_mmap_bytes};

  auto writer = SqliteDb::open(options.path, OpenMode::read_write_create);
  if (!writer) return writer.error();
  if (auto r = apply_pragmas(*writer, ConnectionRole::writer, pragmas); !r) return r.error();
  if (options.quick_check_at_open) {
    // Before the migrations, which would otherwise be the first to trip over a damaged page.
    auto verdict = run_integrity_pragma(*writer, IntegrityPragma::quick_check);
    if (!verdict) return verdict.error();
    if (*verdict != k_integrity_ok) {
      return make_error(ErrorCode::corrupt, "the store database " + options.path.string() +
                                                " fails PRAGMA quick_check: " + *verdict);
    }
  }
  if (auto r = migrate(*writer); !r) return r.error();
  if (auto r = sync_drivers(*writer); !r) return r.error();

  // Rationale: readers are opened read-write and made read-only with PRAGMA query_only rather than
  // SQLITE_OPEN_READONLY: a read-only connection cannot recover or rebuild the WAL index (-shm)
  // that a crashed writer left behind, and would fail where this one just works.
  std::vector<std::unique_ptr<SqliteDb>> readers;
  for (unsigned i = 0; i < options.reader_count; ++i) {
    auto reader = SqliteDb::open(options.path, OpenMode::read_write);
    if (!reader) return reader.error();
    if (auto r = apply_pragmas(*reader, ConnectionRole::reader, pragmas); !r) return r.error();
    readers.push_back(std::make_unique<SqliteDb>(std::move(*reader)));
  }

  auto clock = options.clock ? options.clock : std::function<std::int64_t()>(system_clock_ms);
  const EvictionPolicy policy{options.max_size_bytes, options.stale_driver_after.count()};
  return std::unique_ptr<SqliteStore>(
      new SqliteStore(std::move(*writer), std::move(readers), std::move(clock), options.hot_cache_bytes, policy,
                      options.compression_level, options.namespace_quota_bytes, options.report_quorum));
}

SqliteStore::SqliteStore(SqliteDb writer, std::vector<std::unique_ptr<SqliteDb>> readers,
                         std::function<std::int64_t()> clock, std::uint64_t hot_cache_bytes, EvictionPolicy policy,
                         int compression_level, std::uint64_t namespace_quota_bytes, unsigned report_quorum)
    : m_writer(std::move(writer)),
      m_readers(std::move(readers)),
      m_policy(policy),
      m_compression_level(compression_level),
      m_namespace_quota(namespace_quota_bytes),
      m_report_quorum(report_quorum),
      m_clock(std::move(clock)),
      m_hot(hot_cache_bytes) {}

SqliteStore::~SqliteStore() {
  if (auto r = flush_usage(); !r) {
    spdlog::warn("store: usage (hits, last-used times) lost at close: {}", r.error().message);
  }
}

// --- lookups ---

Result<std::optional<StoredImage>> SqliteStore::lookup(const proto::Digest256& key_id, const Visibility& who) {
  auto found = read_verified(k_lookup_sql, key_id, who, "looking up " + proto::to_hex(key_id));
  if (found && found->has_value()) note_served((*found)->info);
  return found;
}

Result<std::optional<StoredImage>> SqliteStore::lookup_explained(const proto::Digest256& key_id,
                                                                 const Visibility& who, MissReason& why) {
  auto found = read_verified(k_lookup_sql, key_id, who, "looking up " + proto::to_hex(key_id), &why);
  if (found && found->has_value()) note_served((*found)->info);
  return found;
}

Result<std::optional<StoredImage>> SqliteStore::lookup_fast(const proto::Digest256& fast_key_id, const Visibility& who) {
  auto found = read_verified(k_lookup_fast_sql, fast_key_id, who, "looking up fast key " + proto::to_hex(fast_key_id));
  if (found && found->has_value()) note_served((*found)->info);
  return found;
}

Result<std::optional<StoredImage>> SqliteStore::read_verified(const std::string& sql, const proto::Digest256& id,
                                                              const Visibility& who, const std::string& what,
                                                              MissReason* why) {
  EntryRow row;
  std::optional<ImageBuffer> image;
  std::uint64_t ticket = 0;
  {
    auto db = m_readers.acquire();
    // Taken before the read transaction takes its snapshot: insert() below then refuses the image
    // if a write committed since may have changed the row (hot_image_cache.hpp).
    ticket = m_hot.read_ticket();
    // One read transaction, so the row and its image come from the same snapshot even when a PUT
    // replaces the entry in between.
    auto transaction = Transaction::begin(*db, TransactionKind::deferred, what);
    if (!transaction) return transaction.error();
    {
      auto stmt = db->statement(sql);
      if (!stmt) return stmt.error();
      (*stmt)->bind_blob(1, id.bytes);
      (*stmt)->bind(2, who.own_namespace);
      auto has_row = (*stmt)->step(what);
      if (!has_row) return has_row.error();
      if (!*has_row) {
        // Only lookup_explained asks, so a plain lookup's miss costs no second query; this one
        // walks the same unique index (key id, namespace) in the same snapshot.
        if (why != nullptr) {
          auto probe = db->statement(k_visible_quarantined_sql);
          if (!probe) return probe.error();
          (*probe)->bind_blob(1, id.bytes);
          (*probe)->bind(2, who.own_namespace);
          auto quarantined = (*probe)->step(what);
          if (!quarantined) return quarantined.error();
          *why = *quarantined ? MissReason::quarantined : MissReason::not_found;
        }
        return std::optional<StoredImage>();
      }
      auto read = read_entry_row(**stmt);
      if (!read) {
        return make_error(ErrorCode::corrupt, what + ": an entries row has a key id, digest or checksum of the wrong size");
      }
      row = std::move(*read);
    }
    if (!is_known_codec(row.info.codec)) {
      return make_error(ErrorCode::unsupported,
                        what + ": codec " + std::to_string(row.info.codec) + " is unknown to this jitcached");
    }
    // Verified when it entered the cache, against this row's checksum and size: not hashed again.
    if (auto cached = m_hot.find(row.id, row.info.checksum, row.info.raw_size)) {
      if (auto r = transaction->commit(what); !r) return r.error();
      return std::optional<StoredImage>(StoredImage{std::move(row.info), std::move(cached), row.id});
    }
    auto blob = db->read_blob("blobs", "data", row.id, what);
    if (!blob) return blob.error();
    image = std::move(*blob);
    if (auto r = transaction->commit(what); !r) return r.error();
  }

  // Decompressed and hashed after the read transaction, on no connection: the snapshot is not
  // held open (holding back WAL checkpoints) while zstd runs.
  auto checked = verified_image(row.info, std::move(image));
  if (auto* failure = std::get_if<DecodeFailure>(&checked)) {
    discard_corrupt_entry(row.id, row.info, failure->reason);
    if (why != nullptr) *why = MissReason::corrupt;
    return std::optional<StoredImage>();
  }
  const proto::EntryInfo& info = row.info;
  auto verified = std::make_shared<const ImageBuffer>(std::move(std::get<ImageBuffer>(checked)));
  m_hot.insert(row.id, info.checksum, verified, ticket);
  return std::optional<StoredImage>(StoredImage{std::move(row.info), std::move(verified), row.id});
}

bool SqliteStore::discard_corrupt_entry(std::int64_t id, const proto::EntryInfo& info, std::string_view reason) {
  const std::string entry = describe(info.key_id, info.namespace_id);
  std::lock_guard lock(m_writer_mutex);
  auto stmt = m_writer.statement(k_delete_corrupt_sql);
  Result<void> deleted = stmt ? Result<void>() : Result<void>(stmt.error());
  if (deleted) {
    (*stmt)->bind(1, id);
    (*stmt)->bind_blob(2, info.key_id.bytes);
    (*stmt)->bind(3, info.namespace_id);
    (*stmt)->bind_blob(4, info.checksum.bytes);
    deleted = (*stmt)->run("deleting corrupt " + entry);
  }
  if (!deleted) {
    spdlog::warn("store: corrupt {} ({}) could not be deleted: {}", entry, reason, deleted.error().message);
    return false;
  }
  // Zero changes: another lookup found and deleted it first, or a PUT replaced it; either way it
  // is not counted twice.
  if (m_writer.changes() > 0) {
    drop_row(id);
    m_corrupt_entries.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("store: deleted corrupt {}: {}", entry, reason);
    return true;
  }
  return false;
}

Result<std::optional<StoredImage>> SqliteStore::lookup_prefix(const std::string& prefix, const Visibility& who) {
  auto range = key_id_range(prefix, proto::k_min_key_id_prefix_length);
  if (!range) return range.error();
  PrefixMatch match;
  {
    auto db = m_readers.acquire();
    auto found = match_prefix(*db, Scope::visible, *range, who, "looking up key id prefix " + prefix);
    if (!found) return found.error();
    match = *found;
  }
  if (match.count == 0) return std::optional<StoredImage>();
  if (match.count > 1) return ambiguous(prefix);
  return lookup(match.key_id, who);
}

// --- writes ---

Result<PutOutcome> SqliteStore::put(const PutInput& input) {
  PutOutcome outcome;
  outcome.key_id = proto::key_id(input.key);
  // The checksum covers the raw image, whatever the codec (docs/entry-format.md).
  const proto::Checksum128 checksum = proto::xxh3_128(input.image);
  // Rationale: compressed here, before the writer lock, so one PUT's zstd run never makes other
  // writers wait; only the SQLite writes happen under the lock.
  const EncodedImage encoded = encode_image(input.image, m_compression_level);
  const proto::Bytes stored = encoded.codec == Codec::raw
                                  ? input.image
                                  : proto::Bytes(encoded.compressed.data(), encoded.compressed.size());
  const auto raw_size = static_cast<std::int64_t>(input.image.size());
  const auto stored_size = static_cast<std::int64_t>(stored.size());
  const std::int64_t now = m_clock();
  const std::string what = "storing " + describe(outcome.key_id, input.namespace_id);
  // max_size counts stored bytes (eviction.hpp), so the limit is on what the image takes on disk.
  if (m_policy.max_size_bytes != 0 && stored.size() > m_policy.max_size_bytes) {
    return make_error(ErrorCode::too_large, what + ": the image takes " + std::to_string(stored.size()) +
                                                " bytes stored, more than the store's max_size of " +
                                                std::to_string(m_policy.max_size_bytes));
  }
  const bool quota_applies = m_namespace_quota != 0 && input.namespace_id != k_shared_namespace;
  if (quota_applies && stored.size() > m_namespace_quota) {
    return make_error(ErrorCode::too_large, what + ": the image takes " + std::to_string(stored.size()) +
                                                " bytes stored, more than the namespace_quota of " +
                                                std::to_string(m_namespace_quota) + " bytes per uid");
  }
  std::lock_guard lock(m_writer_mutex);
  if (quota_applies) {
    if (auto r = evict_over_quota_locked(input.namespace_id, stored.size()); !r) return r.error();
  }
  if (m_policy.max_size_bytes != 0) {
    // Rationale: eviction commits before the PUT's own transaction starts, so a PUT that then fails
    // (a full disk) still leaves the store within its limit; the room made is not lost, only early.
    auto evicted = evict_locked(EvictionRequest{stored.size(), false});
    if (!evicted) return evicted.error();
  }
  auto transaction = Transaction::begin(m_writer, TransactionKind::immediate, what);
  if (!transaction) return transaction.error();

  std::optional<std::int64_t> existing;
  {
    auto stmt = m_writer.statement(k_find_entry_sql);
    if (!stmt) return stmt.error();
    (*stmt)->bind_blob(1, outcome.key_id.bytes);
    (*stmt)->bind(2, input.namespace_id);
    auto row = (*stmt)->step(what);
    if (!row) return row.error();
    if (*row) existing = (*stmt)->column_int64(0);
  }
  {
    auto stmt = m_writer.statement(existing ? k_replace_entry_sql : k_insert_entry_sql);
    if (!stmt) return stmt.error();
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
    // Bound without a copy: it must outlive run().
    const proto::Digest256 fast_key_id =
        input.content_fast ? proto::fast_key_id(proto::fast_key_of(input.key, *input.content_fast)) : proto::Digest256{};
    if (input.content_fast) {
      s.bind_blob(17, input.content_fast->bytes);
      s.bind_blob(18, fast_key_id.bytes);
    } else {
      s.bind_null(17);
      s.bind_null(18);
    }
    if (auto r = s.run(what); !r) return r.error();
  }
  const std::int64_t id = existing ? *existing : m_writer.last_insert_rowid();
  {
    auto stmt = m_writer.statement(k_store_blob_sql);
    if (!stmt) return stmt.error();
    (*stmt)->bind(1, id);
    (*stmt)->bind_blob(2, stored);
    if (auto r = (*stmt)->run(what); !r) return r.error();
  }
  if (auto r = transaction->commit(what); !r) return r.error();
  // A replaced row's cached image is stale. A new row may have the id of a row deleted earlier
  // (SQLite reuses the largest rowid after it is deleted); dropping that id too costs nothing.
  drop_row(id);
  outcome.replaced = existing.has_value();
  outcome.row_id = id;
  return outcome;
}

Result<std::optional<ReportOutcome>> SqliteStore::report_failure(const proto::Digest256& key_id, const Visibility& who,
                                                                 const FailureReport& report) {
  const std::int64_t now = m_clock();
  std::lock_guard lock(m_writer_mutex);
  auto quarantined = quarantine_entry(m_writer, key_id, who, report, now, m_report_quorum);
  if (!quarantined) return quarantined.error();
  if (!quarantined->has_value()) return std::optional<ReportOutcome>();
  // Lookups skip a quarantined row, so its cached image would only hold memory until evicted; a
  // row hidden from one uid is still served to the others.
  if ((*quarantined)->outcome.verdict == ReportVerdict::quarantined) drop_row((*quarantined)->entry_id);
  return std::optional<ReportOutcome>((*quarantined)->outcome);
}

Result<std::uint32_t> SqliteStore::remove(const std::string& prefix, const Visibility& who) {
  auto range = key_id_range(prefix, proto::k_min_key_id_prefix_length);
  if (!range) return range.error();
  const std::string what = "removing key id prefix " + prefix;

  std::lock_guard lock(m_writer_mutex);
  auto transaction = Transaction::begin(m_writer, TransactionKind::immediate, what);
  if (!transaction) return transaction.error();
  auto match = match_prefix(m_writer, Scope::removable, *range, who, what);
  if (!match) return match.error();
  if (match->count == 0) return std::uint32_t{0};
  if (match->count > 1) return ambiguous(prefix);

  auto stmt = m_writer.statement(k_remove_sql);
  if (!stmt) return stmt.error();
  (*stmt)->bind_blob(1, range->lo);
  (*stmt)->bind_blob(2, range->hi);
  (*stmt)->bind(3, who.trusted ? 1 : 0);
  (*stmt)->bind(4, who.own_namespace);
  std::vector<std::int64_t> removed_ids;
  for (;;) {
    auto row = (*stmt)->step(what);
    if (!row) return row.error();
    if (!*row) break;
    removed_ids.push_back((*stmt)->column_int64(0));
  }
  if (auto r = transaction->commit(what); !r) return r.error();
  for (std::int64_t id : removed_ids) drop_row(id);
  return static_cast<std::uint32_t>(removed_ids.size());
}

Result<void> SqliteStore::flush_usage() {
  std::lock_guard lock(m_writer_mutex);
  return flush_usage_locked();
}

Result<void> SqliteStore::flush_usage_locked() {
  std::vector<UsageRecord> records = m_usage.take();
  std::vector<DriverAsk> asks = m_drivers.take();
  if (records.empty() && asks.empty()) return {};
  const std::string what = "writing the hits of " + std::to_string(records.size()) + " entries";

  auto write = [&]() -> Result<void> {
    auto transaction = Transaction::begin(m_writer, TransactionKind::immediate, what);
    if (!transaction) return transaction.error();
    if (!records.empty()) {
      auto stmt = m_writer.statement(k_flush_usage_sql);
      if (!stmt) return stmt.error();
      for (const auto& record : records) {
        (*stmt)->reset();
        (*stmt)->bind(1, static_cast<std::int64_t>(record.hits));
        (*stmt)->bind(2, record.last_used_at_ms);
        (*stmt)->bind_blob(3, record.key_id.bytes);
        (*stmt)->bind(4, record.namespace_id);
        // An entry removed since its lookup simply matches no row.
        if (auto r = (*stmt)->run(what); !r) return r;
      }
    }
    if (!asks.empty()) {
      auto stmt = m_writer.statement(k_flush_drivers_sql);
      if (!stmt) return stmt.error();
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
  }
  return written;
}

void SqliteStore::note_driver_asked(std::uint32_t driver_api, const std::string& driver_build) {
  m_drivers.record_asked(driver_api, driver_build, m_clock());
}

void SqliteStore::note_served(const proto::EntryInfo& info) {
  const std::int64_t now = m_clock();
  m_usage.record(info.key_id, info.namespace_id, now);
  m_drivers.record_served(info.key.driver_api, info.key.driver_build, now);
}

Result<void> SqliteStore::evict_over_quota_locked(std::uint32_t namespace_id, std::uint64_t incoming_bytes) {
  auto bytes = namespace_bytes(m_writer, namespace_id);
  if (!bytes) return bytes.error();
  if (*bytes + incoming_bytes <= m_namespace_quota) return {};
  // As evict_locked: the namespace's hits so far order its entries.
  if (auto r = flush_usage_locked(); !r) return r.error();
  const std::string what = "evicting over the quota of namespace " + std::to_string(namespace_id);
  auto transaction = Transaction::begin(m_writer, TransactionKind::immediate, what);
  if (!transaction) return transaction.error();
  auto result = evict_over_quota(m_writer, namespace_id, m_namespace_quota, incoming_bytes);
  if (!result) return result.error();
  if (result->removed_ids.empty()) return {};
  if (auto r = transaction->commit(what); !r) return r.error();
  for (std::int64_t id : result->removed_ids) drop_row(id);
  m_quota_evictions.fetch_add(result->removed_ids.size(), std::memory_order_relaxed);
  spdlog::info("store: namespace {} reached its quota: evicted {} entries ({} bytes stored)", namespace_id,
               result->removed_ids.size(), result->removed_bytes);
  return {};
}

Result<EvictionResult> SqliteStore::evict_locked(const EvictionRequest& request) {
  // Rationale: the size is checked before anything is flushed, so a PUT under the limit costs one
  // read of the totals row, and hits still become writes only every usage_flush_interval.
  if (!request.all_stale) {
    auto bytes = stored_bytes(m_writer);
    if (!bytes) return bytes.error();
    if (!over_limit(m_policy, *bytes, request.incoming_bytes)) return EvictionResult{};
  }
  if (auto r = flush_usage_locked(); !r) return r.error();
  const std::string what = "evicting entries";
  auto transaction = Transaction::begin(m_writer, TransactionKind::immediate, what);
  if (!transaction) return transaction.error();
  auto result = evict(m_writer, m_policy, request, m_clock());
  if (!result) return result.error();
  if (result->removed_ids.empty()) return result;
  if (auto r = transaction->commit(what); !r) return r.error();
  for (std::int64_t id : result->removed_ids) drop_row(id);
  m_evictions.fetch_add(result->removed_ids.size(), std::memory_order_relaxed);
  m_evicted_bytes.fetch_add(result->removed_bytes, std::memory_order_relaxed);
  spdlog::info("store: evicted {} entries ({} bytes; {} of a stale driver)", result->removed_ids.size(),
               result->removed_bytes, result->stale_entries);
  return result;
}

Result<GcOutcome> SqliteStore::collect_garbage() {
  GcOutcome outcome;
  {
    std::lock_guard lock(m_writer_mutex);
    auto evicted = evict_locked(EvictionRequest{0, true});
    if (!evicted) return evicted.error();
    outcome.evicted_entries = evicted->removed_ids.size();
    outcome.evicted_bytes = evicted->removed_bytes;
    outcome.stale_entries = evicted->stale_entries;
  }
  auto now = totals();
  if (!now) return now.error();
  outcome.entries = now->entries;
  outcome.bytes_stored = now->bytes_stored;
  return outcome;
}

// --- reads without images ---

Result<ListPage> SqliteStore::list(const ListQuery& query, const Visibility& who) {
  if (query.limit < 1 || query.limit > proto::k_max_list_limit) {
    return make_error(ErrorCode::invalid_argument, "LIST limit " + std::to_string(query.limit) + " is not within 1.." +
                                                       std::to_string(proto::k_max_list_limit));
  }
  auto range = key_id_range(query.key_id_prefix, 0);
  if (!range) return range.error();

  Position start{range->lo, -1};
  if (!query.cursor.empty()) {
    auto cursor = decode_list_cursor(query.cursor);
    if (!cursor) return cursor.error();
    Position after{std::vector<std::uint8_t>(cursor->key_id.bytes.begin(), cursor->key_id.bytes.end()),
                   cursor->namespace_id};
    if (position_less(start, after)) start = std::move(after);
  }

  // With stale_driver_after 0 no driver is ever stale.
  if (query.stale_only && m_policy.stale_driver_after_ms <= 0) return ListPage{};
  // Asks kept in memory are written first, so that a driver asked for since the last flush is not
  // shown as stale.
  if (query.stale_only) {
    if (auto r = flush_usage(); !r) return r.error();
  }
  auto db = m_readers.acquire();
  auto stmt = db->statement(query.namespace_id ? std::string_view(k_list_namespace_sql) : std::string_view(k_list_sql));
  if (!stmt) return stmt.error();
  Statement& s = **stmt;
  // With a fixed namespace N, "(key_id, N) after start" is "key_id >= start.key_id" when N is above
  // start's namespace, else "key_id > start.key_id", which in BLOB order is
  // "key_id >= start.key_id || x'00'".
  if (query.namespace_id && *query.namespace_id <= start.namespace_id) start.key_id.push_back(0);
  s.bind_blob(1, start.key_id);
  s.bind(2, start.namespace_id);
  s.bind_blob(3, range->hi);
  s.bind_text(4, query.arch);
  s.bind(5, query.driver_api);
  s.bind_text(6, query.driver_build);
  s.bind(7, who.trusted ? 1 : 0);
  s.bind(8, who.own_namespace);
  s.bind(9, std::int64_t{query.limit} + 1);  // one more than asked: is there a next page?
  if (query.namespace_id) s.bind(10, *query.namespace_id);
  s.bind(11, query.stale_only ? 1 : 0);
  s.bind(12, m_clock() - m_policy.stale_driver_after_ms);

  ListPage page;
  for (;;) {
    auto has_row = s.step("listing entries");
    if (!has_row) return has_row.error();
    if (!*has_row) break;
    if (page.entries.size() == query.limit) {
      const proto::EntryInfo& last = page.entries.back();
      page.next_cursor = encode_list_cursor(ListPosition{last.key_id, last.namespace_id});
      break;
    }
    auto row = read_entry_row(s);
    if (!row) return make_error(ErrorCode::corrupt, "listing entries: a row has a key id, digest or checksum of the wrong size");
    page.entries.push_back(std::move(row->info));
  }
  return page;
}

Result<Totals> SqliteStore::totals() {
  auto db = m_readers.acquire();
  auto stmt = db->statement(k_totals_sql);
  if (!stmt) return stmt.error();
  auto row = (*stmt)->step("reading the store totals");
  if (!row) return row.error();
  if (!*row) return make_error(ErrorCode::corrupt, "the store's totals row is missing");
  Totals totals;
  totals.entries = static_cast<std::uint64_t>((*stmt)->column_int64(0));
  totals.bytes_raw = static_cast<std::uint64_t>((*stmt)->column_int64(1));
  totals.bytes_stored = static_cast<std::uint64_t>((*stmt)->column_int64(2));
  totals.entries_quarantined = static_cast<std::uint64_t>((*stmt)->column_int64(3));
  const Totals counted = session_counters();
  totals.corrupt_entries = counted.corrupt_entries;
  totals.hot_cache_hits = counted.hot_cache_hits;
  totals.hot_cache_misses = counted.hot_cache_misses;
  totals.hot_cache_bytes = counted.hot_cache_bytes;
  totals.hot_cache_entries = counted.hot_cache_entries;
  totals.max_size = counted.max_size;
  totals.evictions = counted.evictions;
  totals.evicted_bytes = counted.evicted_bytes;
  totals.quota_evictions = counted.quota_evictions;
  totals.usage_pending = counted.usage_pending;
  totals.usage_dropped = counted.usage_dropped;
  return totals;
}

Totals SqliteStore::session_counters() const {
  Totals totals;
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
  totals.usage_pending = m_usage.pending() + m_drivers.pending();
  totals.usage_dropped = m_usage.dropped() + m_drivers.dropped();
  return totals;
}

void SqliteStore::leave_files_at_close() {
  auto persist = [](SqliteDb& db) {
    int on = 1;
    sqlite3_file_control(db.handle(), "main", SQLITE_FCNTL_PERSIST_WAL, &on);
  };
  std::lock_guard lock(m_writer_mutex);
  persist(m_writer);
  std::vector<ConnectionPool<SqliteDb>::Lease> readers;
  for (std::size_t i = 0; i < m_readers.size(); ++i) {
    readers.push_back(m_readers.acquire());
    persist(*readers.back());
  }
}

// --- published images ---

void SqliteStore::drop_row(std::int64_t id) {
  m_hot.invalidate(id);
  if (m_row_dropped) m_row_dropped(id);
}

Result<std::optional<EntryRow>> SqliteStore::read_row(const std::string& sql,
                                                      const std::function<void(Statement&)>& bind,
                                                      const std::string& what) {
  auto db = m_readers.acquire();
  auto stmt = db->statement(sql);
  if (!stmt) return stmt.error();
  bind(**stmt);
  auto has_row = (*stmt)->step(what);
  if (!has_row) return has_row.error();
  if (!*has_row) return std::optional<EntryRow>();
  auto row = read_entry_row(**stmt);
  if (!row) return make_error(ErrorCode::corrupt, what + ": an entries row has a key id, digest or checksum of the wrong size");
  return std::optional<EntryRow>(std::move(*row));
}

Result<std::optional<proto::EntryInfo>> SqliteStore::publishable_entry(std::int64_t row_id,
                                                                       const proto::Digest256& fast_key_id) {
  auto row = read_row(
      k_publishable_sql,
      [&](Statement& s) {
        s.bind(1, row_id);
        s.bind_blob(2, fast_key_id.bytes);
      },
      "checking row " + std::to_string(row_id) + " for publishing");
  if (!row) return row.error();
  if (!row->has_value()) return std::optional<proto::EntryInfo>();
  return std::optional<proto::EntryInfo>(std::move((*row)->info));
}

Result<std::optional<proto::EntryInfo>> SqliteStore::note_published_hit(const proto::Digest256& fast_key_id) {
  auto row = read_row(
      k_published_hit_sql, [&](Statement& s) { s.bind_blob(1, fast_key_id.bytes); },
      "noting a published hit of " + proto::to_hex(fast_key_id));
  if (!row) return row.error();
  if (!row->has_value()) return std::optional<proto::EntryInfo>();
  note_served((*row)->info);
  return std::optional<proto::EntryInfo>(std::move((*row)->info));
}

}  // namespace jitcache::daemon::store
