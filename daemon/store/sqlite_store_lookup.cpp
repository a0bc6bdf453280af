// SqliteStore's lookups (Store::lookup): the visible row by key id, fast key id or key-id prefix,
// its image from the hot image cache or the blob, verified, and on a miss the reason.
#include <daemon/store/sqlite_store.hpp>

#include <spdlog/spdlog.h>

#include <string>
#include <utility>

#include <common/result.hpp>
#include <daemon/store/entry_row.hpp>
#include <daemon/store/key_id_range.hpp>
#include <daemon/store/prefix_match.hpp>
#include <daemon/store/verified_image.hpp>

namespace jitcache::daemon::store {

using common::ErrorCode;
using common::make_error;

namespace {

// A quarantined entry is never served: with the shared one quarantined, the caller's own live entry
// is. Nor is a shared entry the caller itself reported failing (quarantine.hpp); ?2 is the caller's
// namespace, its uid when untrusted, and the shared namespace (never a reporter) when trusted.
// Rationale: servable is a column, not a condition, so one statement answers every lookup: the rows
// the caller sees come in the order a lookup serves them, the first servable one is the hit (one row
// read, as with the condition), no row at all is not_found, and only rows that are not servable are
// quarantined; a miss costs no second query to say why.
const std::string k_servable_column =
    ", quarantined_at_ms IS NULL AND NOT (namespace = 0 AND EXISTS (SELECT 1 FROM failure_reports"
    " WHERE entry_id = entries.id AND reporter_uid = ?2))";
constexpr int k_servable_index = 20;  // after k_entry_columns' 20
// Whether anyone reported the row failing: a row nobody did is every caller's answer, which the hot
// image cache may then give without asking SQLite (hot_image_cache.hpp "Answered hits").
const std::string k_reported_column = ", EXISTS (SELECT 1 FROM failure_reports WHERE entry_id = entries.id)";
constexpr int k_reported_index = 21;
const std::string k_lookup_sql = std::string("SELECT ") + k_entry_columns + k_servable_column + k_reported_column +
                                 " FROM entries WHERE key_id = ?1 AND namespace IN (0, ?2) ORDER BY namespace ASC";
// The same by fast key. Two live rows of one namespace share a fast key only if their sources
// collide under XXH3 (by accident or on purpose): the newest is offered, and the client's check of
// the content digest turns a wrong one into a lookup by key.
const std::string k_lookup_fast_sql = std::string("SELECT ") + k_entry_columns + k_servable_column + k_reported_column +
                                      " FROM entries WHERE fast_key_id = ?1 AND namespace IN (0, ?2)"
                                      " ORDER BY namespace ASC, id DESC";

// Only if it is still the row that failed: a PUT may have replaced it since it was read.
constexpr char k_delete_corrupt_sql[] =
    "DELETE FROM entries WHERE id = ?1 AND key_id = ?2 AND namespace = ?3 AND checksum = ?4";

}  // namespace

Result<LookupOutcome> SqliteStore::lookup(const Selector& selector, const Visibility& who) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::lookup));
  if (const auto& driver = selector.driver()) m_drivers.record_asked(driver->api, driver->build, m_clock());
  return m_handle.run([&](StoreDatabase& db) -> Result<LookupOutcome> {
    if (selector.kind() == Selector::Kind::key_id_prefix) return lookup_prefix(db, selector.prefix(), who);
    return read_verified(db, selector.kind(), selector.id(), who);
  });
}

Result<LookupOutcome> SqliteStore::read_verified(StoreDatabase& db, Selector::Kind kind, const proto::Digest256& id,
                                                 const Visibility& who) {
  const bool by_fast_key = kind == Selector::Kind::fast_key_id;
  // Rationale: a hit answered before is answered from memory: no read transaction, no statement,
  // no SQLite lock (fcntl) and no text for an error that will not happen (docs/benchmarks.md "The
  // hit path at the limit").
  if (auto remembered = m_hot.find_hit(by_fast_key, id)) {
    note_served(*remembered->info);
    return LookupOutcome(
        Hit{*remembered->info, std::move(remembered->image), remembered->row_id, remembered->content_fast});
  }
  const std::string what = (by_fast_key ? "looking up fast key " : "looking up ") + proto::to_hex(id);
  EntryRow row;
  std::optional<ImageBuffer> image;
  std::uint64_t ticket = 0;
  // Every caller's answer: the first row the statement gave, shared, live and never reported.
  bool everyones_answer = false;
  {
    auto reader = db.readers.acquire();
    // Taken before the read transaction takes its snapshot: insert() below then refuses the image
    // if a write committed since may have changed the row (hot_image_cache.hpp).
    ticket = m_hot.read_ticket();
    // One read transaction, so the row and its image come from the same snapshot even when a PUT
    // replaces the entry in between.
    auto transaction = Transaction::begin(*reader, TransactionKind::deferred, what);
    JITCACHE_TRY(transaction);
    {
      auto stmt = reader->statement(by_fast_key ? k_lookup_fast_sql : k_lookup_sql);
      JITCACHE_TRY(stmt);
      (*stmt)->bind_blob(1, id.bytes);
      (*stmt)->bind(2, who.own_namespace);
      bool unservable_seen = false;
      for (;;) {
        auto has_row = (*stmt)->step(what);
        JITCACHE_TRY(has_row);
        if (!*has_row) return LookupOutcome(Miss{unservable_seen ? MissReason::quarantined : MissReason::not_found});
        if ((*stmt)->column_int64(k_servable_index) != 0) break;
        unservable_seen = true;
      }
      everyones_answer = !unservable_seen && (*stmt)->column_int64(k_reported_index) == 0;
      auto read = read_entry_row(**stmt);
      if (!read) {
        return make_error(ErrorCode::corrupt,
                          what + ": an entries row has a key id, digest or checksum of the wrong size");
      }
      row = std::move(*read);
    }
    if (!is_known_codec(row.info.codec)) {
      return make_error(ErrorCode::unsupported,
                        what + ": codec " + std::to_string(row.info.codec) + " is unknown to this jitcached");
    }
    everyones_answer = everyones_answer && row.info.namespace_id == k_shared_namespace;
    // Verified when it entered the cache, against this row's checksum and size: not hashed again.
    if (auto cached = m_hot.find(row.id, row.info.checksum, row.info.raw_size)) {
      JITCACHE_TRY(transaction->commit(what));
      note_served(row.info);
      if (everyones_answer) remember(by_fast_key, id, row, ticket);
      return LookupOutcome(Hit{std::move(row.info), std::move(cached), row.id, row.content_fast});
    }
    auto blob = reader->read_blob("blobs", "data", row.id, what);
    JITCACHE_TRY(blob);
    image = std::move(*blob);
    JITCACHE_TRY(transaction->commit(what));
  }

  // Decompressed and hashed after the read transaction, on no connection: the snapshot is not
  // held open (holding back WAL checkpoints) while zstd runs.
  auto checked = verified_image(row.info, std::move(image));
  if (auto* failure = std::get_if<DecodeFailure>(&checked)) {
    discard_corrupt_entry(db, row.id, row.info, failure->reason);
    return LookupOutcome(Miss{MissReason::corrupt});
  }
  auto verified = std::make_shared<const ImageBuffer>(std::move(std::get<ImageBuffer>(checked)));
  m_hot.insert(row.id, row.info.checksum, verified, ticket);
  note_served(row.info);
  if (everyones_answer) remember(by_fast_key, id, row, ticket);
  return LookupOutcome(Hit{std::move(row.info), std::move(verified), row.id, row.content_fast});
}

void SqliteStore::remember(bool by_fast_key, const proto::Digest256& id, const EntryRow& row, std::uint64_t ticket) {
  m_hot.remember_hit(by_fast_key, id, row.id, row.info.checksum, std::make_shared<const proto::EntryInfo>(row.info),
                     row.content_fast, ticket);
}

Result<LookupOutcome> SqliteStore::lookup_prefix(StoreDatabase& db, const std::string& prefix, const Visibility& who) {
  auto range = key_id_range(prefix, proto::k_min_key_id_prefix_length);
  JITCACHE_TRY(range);
  PrefixMatch match;
  {
    auto reader = db.readers.acquire();
    auto found = match_prefix(*reader, PrefixScope::visible, *range, who, "looking up key id prefix " + prefix);
    JITCACHE_TRY(found);
    match = *found;
  }
  if (match.count == 0) return LookupOutcome(Miss{MissReason::not_found});
  if (match.count > 1) return ambiguous_prefix(prefix);
  return read_verified(db, Selector::Kind::key_id, match.key_id, who);
}

bool SqliteStore::discard_corrupt_entry(StoreDatabase& db, std::int64_t id, const proto::EntryInfo& info,
                                        std::string_view reason) {
  const std::string entry = describe_entry(info.key_id, info.namespace_id);
  std::lock_guard lock(m_handle.writer_mutex());
  auto stmt = db.writer.statement(k_delete_corrupt_sql);
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
  if (db.writer.changes() > 0) {
    drop_row(id);
    m_corrupt_entries.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("store: deleted corrupt {}: {}", entry, reason);
    return true;
  }
  return false;
}

}  // namespace jitcache::daemon::store
