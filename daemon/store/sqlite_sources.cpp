// SqliteSources (sqlite_sources.hpp): keeping a compiled entry's PTX after its PUT, staying within
// source_budget, and reading the sources and the hot set back for the re-JIT.
#include <daemon/store/sqlite_sources.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <common/result.hpp>
#include <daemon/store/image_codec.hpp>
#include <proto/content_digest.hpp>

namespace jitcache::daemon::store {

using common::ErrorCode;
using common::make_error;

namespace {

constexpr char k_source_present_sql[] = "SELECT 1 FROM sources WHERE content_digest = ?1";
constexpr char k_insert_source_sql[] =
    "INSERT INTO sources (content_digest, codec, raw_size, stored_size, kept_at_ms, data)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (content_digest) DO NOTHING";
constexpr char k_source_id_sql[] = "SELECT id FROM sources WHERE content_digest = ?1";
constexpr char k_link_entry_sql[] =
    "INSERT INTO entry_sources (entry_id, source_id, worker_options) VALUES (?1, ?2, ?3)"
    " ON CONFLICT (entry_id) DO UPDATE SET source_id = excluded.source_id, worker_options = excluded.worker_options";
constexpr char k_source_bytes_sql[] = "SELECT source_bytes FROM totals WHERE id = 0";
// The least valuable first: sources no entry uses, then by the latest use of any entry compiled
// from them (the coldest first), then the oldest kept.
constexpr char k_sources_by_value_sql[] =
    "SELECT s.id, s.stored_size FROM sources AS s"
    " LEFT JOIN entry_sources AS es ON es.source_id = s.id"
    " LEFT JOIN entries AS e ON e.id = es.entry_id"
    " GROUP BY s.id ORDER BY COUNT(e.id) > 0, MAX(e.last_used_at_ms), s.kept_at_ms, s.id";
constexpr char k_unlink_source_sql[] = "DELETE FROM entry_sources WHERE source_id = ?1";
constexpr char k_delete_source_sql[] = "DELETE FROM sources WHERE id = ?1";

constexpr char k_hot_set_sql[] =
    "SELECT e.content_digest, e.arch, e.driver_api, e.driver_build, e.options, e.content_fast, e.hits,"
    " e.compile_time_us FROM entries AS e JOIN entry_sources AS es ON es.entry_id = e.id"
    " WHERE e.driver_api = ?1 AND e.driver_build = ?2 AND (?3 = '' OR e.arch = ?3) AND e.namespace = 0"
    " AND e.quarantined_at_ms IS NULL AND e.key_schema = ?4 AND e.content_fast IS NOT NULL"
    " ORDER BY (e.hits + 1) * e.compile_time_us DESC, e.last_used_at_ms DESC, e.id LIMIT ?5";
constexpr char k_read_source_sql[] = "SELECT id, codec, raw_size, data FROM sources WHERE content_digest = ?1";
constexpr char k_has_shared_entry_sql[] = "SELECT 1 FROM entries WHERE key_id = ?1 AND namespace = 0";
constexpr char k_known_drivers_sql[] =
    "SELECT driver_api, driver_build, last_asked_at_ms FROM drivers ORDER BY last_asked_at_ms DESC, driver_api DESC,"
    " driver_build DESC";
constexpr char k_has_entries_of_sql[] =
    "SELECT 1 FROM entries WHERE driver_api = ?1 AND driver_build = ?2 AND arch = ?3 LIMIT 1";

template <std::size_t N>
void copy_blob(proto::Bytes blob, std::array<std::uint8_t, N>& out) {
  if (blob.size() == N) std::copy(blob.begin(), blob.end(), out.begin());
}

}  // namespace

SqliteSources::SqliteSources(StoreHandle& handle, EntryUpkeep& upkeep, std::uint64_t budget,
                             std::function<std::int64_t()> clock)
    : m_handle(handle), m_upkeep(upkeep), m_budget(budget), m_clock(std::move(clock)) {}

std::optional<EncodedSource> SqliteSources::encode(const PutInput& input) {
  if (m_budget == 0 || input.source.empty() || input.namespace_id != k_shared_namespace) return std::nullopt;
  EncodedSource source;
  source.content_digest = input.key.content;
  source.worker_options = input.worker_options;
  source.raw_size = input.source.size();
  // Another entry of this content kept it already: only the link to it is written.
  auto present = m_handle.run([&](StoreDatabase& db) -> Result<bool> {
    auto reader = db.readers.acquire();
    auto stmt = reader->statement(k_source_present_sql);
    JITCACHE_TRY(stmt);
    (*stmt)->bind_blob(1, input.key.content.bytes);
    return (*stmt)->step("looking for a kept source");
  });
  if (present && *present) return source;
  // Rationale: the level the images default to, whatever compression_level says: PTX is text that
  // zstd shrinks several times at that level in milliseconds, against the seconds its compile took.
  EncodedImage encoded = encode_image(input.source, config::k_default_compression_level);
  source.codec = encoded.codec;
  if (encoded.codec == Codec::raw) {
    source.data.assign(input.source.begin(), input.source.end());
  } else {
    source.data = std::move(encoded.compressed);
  }
  if (source.data.size() > m_budget) {
    // Alone over the budget: kept, it would be the first dropped.
    m_dropped.fetch_add(1, std::memory_order_relaxed);
    spdlog::debug("store: the source of {} takes {} bytes compressed, over source_budget ({}): not kept",
                  proto::to_hex(input.key.content), source.data.size(), m_budget);
    return std::nullopt;
  }
  return source;
}

void SqliteSources::keep_locked(StoreDatabase& db, std::int64_t entry_id, const EncodedSource& source) {
  const std::string what = "keeping the source " + proto::to_hex(source.content_digest);
  auto keep = [&]() -> Result<bool> {
    auto transaction = Transaction::begin(db.writer, TransactionKind::immediate, what);
    JITCACHE_TRY(transaction);
    if (!source.data.empty()) {
      auto stmt = db.writer.statement(k_insert_source_sql);
      JITCACHE_TRY(stmt);
      (*stmt)->bind_blob(1, source.content_digest.bytes);
      (*stmt)->bind(2, static_cast<std::int64_t>(source.codec));
      (*stmt)->bind(3, static_cast<std::int64_t>(source.raw_size));
      (*stmt)->bind(4, static_cast<std::int64_t>(source.data.size()));
      (*stmt)->bind(5, m_clock());
      (*stmt)->bind_blob(6, proto::Bytes(source.data.data(), source.data.size()));
      JITCACHE_TRY((*stmt)->run(what));
    }
    std::optional<std::int64_t> source_id;
    {
      auto stmt = db.writer.statement(k_source_id_sql);
      JITCACHE_TRY(stmt);
      (*stmt)->bind_blob(1, source.content_digest.bytes);
      auto row = (*stmt)->step(what);
      JITCACHE_TRY(row);
      if (*row) source_id = (*stmt)->column_int64(0);
    }
    // Present when looked for, dropped since (the budget): the entry goes without, as if over it.
    if (!source_id) return false;
    {
      auto stmt = db.writer.statement(k_link_entry_sql);
      JITCACHE_TRY(stmt);
      (*stmt)->bind(1, entry_id);
      (*stmt)->bind(2, *source_id);
      (*stmt)->bind_text(3, source.worker_options);
      JITCACHE_TRY((*stmt)->run(what));
    }
    std::int64_t bytes = 0;
    {
      auto stmt = db.writer.statement(k_source_bytes_sql);
      JITCACHE_TRY(stmt);
      auto row = (*stmt)->step(what);
      JITCACHE_TRY(row);
      if (*row) bytes = (*stmt)->column_int64(0);
    }
    JITCACHE_TRY(transaction->commit(what));
    return static_cast<std::uint64_t>(bytes) > m_budget;
  };
  // Rationale: a source that cannot be kept costs a later re-JIT, never the PUT that stored the
  // entry, which has committed already.
  auto over = keep();
  if (!over) {
    spdlog::warn("store: {}: {}", what, over.error().message);
    return;
  }
  if (*over) {
    if (auto trimmed = trim_locked(db); !trimmed) {
      spdlog::warn("store: dropping sources to stay within source_budget: {}", trimmed.error().message);
    }
  }
}

Result<void> SqliteSources::trim_locked(StoreDatabase& db) {
  // The entries' last uses decide which sources go: write the ones kept in memory first.
  if (auto flushed = m_upkeep.flush_usage_locked(db); !flushed) {
    spdlog::warn("store: usage not written before dropping sources: {}", flushed.error().message);
  }
  const std::string what = "dropping sources over source_budget";
  auto transaction = Transaction::begin(db.writer, TransactionKind::immediate, what);
  JITCACHE_TRY(transaction);
  std::uint64_t bytes = 0;
  {
    auto stmt = db.writer.statement(k_source_bytes_sql);
    JITCACHE_TRY(stmt);
    auto row = (*stmt)->step(what);
    JITCACHE_TRY(row);
    if (*row) bytes = static_cast<std::uint64_t>((*stmt)->column_int64(0));
  }
  std::vector<std::int64_t> doomed;
  {
    auto stmt = db.writer.statement(k_sources_by_value_sql);
    JITCACHE_TRY(stmt);
    while (bytes > m_budget) {
      auto row = (*stmt)->step(what);
      JITCACHE_TRY(row);
      if (!*row) break;
      doomed.push_back((*stmt)->column_int64(0));
      bytes -= std::min<std::uint64_t>(bytes, static_cast<std::uint64_t>((*stmt)->column_int64(1)));
    }
  }
  for (const std::int64_t id : doomed) {
    for (const char* sql : {k_unlink_source_sql, k_delete_source_sql}) {
      auto stmt = db.writer.statement(sql);
      JITCACHE_TRY(stmt);
      (*stmt)->bind(1, id);
      JITCACHE_TRY((*stmt)->run(what));
    }
  }
  JITCACHE_TRY(transaction->commit(what));
  m_dropped.fetch_add(doomed.size(), std::memory_order_relaxed);
  if (!doomed.empty()) {
    spdlog::debug("store: dropped {} sources to stay within source_budget ({} bytes)", doomed.size(), m_budget);
  }
  return {};
}

Result<std::vector<HotEntry>> SqliteSources::hot_set(const HotSetQuery& query) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::hot_set));
  // The hits decide the order: write the ones kept in memory first.
  auto flushed = m_handle.run_write([this](StoreDatabase& db) {
    std::lock_guard lock(m_handle.writer_mutex());
    return m_upkeep.flush_usage_locked(db);
  });
  if (!flushed) {
    spdlog::warn("store: usage not written before ranking the hot set: {}", flushed.error().message);
  }
  return m_handle.run([&](StoreDatabase& db) -> Result<std::vector<HotEntry>> {
    auto reader = db.readers.acquire();
    auto stmt = reader->statement(k_hot_set_sql);
    JITCACHE_TRY(stmt);
    (*stmt)->bind(1, query.driver_api);
    (*stmt)->bind_text(2, query.driver_build);
    (*stmt)->bind_text(3, query.arch);
    (*stmt)->bind(4, proto::k_key_schema_version);
    (*stmt)->bind(5, query.limit);
    std::vector<HotEntry> entries;
    for (;;) {
      auto row = (*stmt)->step("reading the hot set");
      JITCACHE_TRY(row);
      if (!*row) break;
      HotEntry entry;
      copy_blob((*stmt)->column_blob(0), entry.key.content.bytes);
      entry.key.arch = (*stmt)->column_text(1);
      entry.key.driver_api = static_cast<std::uint32_t>((*stmt)->column_int64(2));
      entry.key.driver_build = (*stmt)->column_text(3);
      entry.key.options = (*stmt)->column_text(4);
      copy_blob((*stmt)->column_blob(5), entry.content_fast.bytes);
      entry.hits = static_cast<std::uint64_t>((*stmt)->column_int64(6));
      entry.compile_time_us = static_cast<std::uint64_t>((*stmt)->column_int64(7));
      entries.push_back(std::move(entry));
    }
    return entries;
  });
}

Result<std::optional<std::vector<std::uint8_t>>> SqliteSources::kept_source(const proto::Digest256& content_digest) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::kept_source));
  struct Stored {
    std::int64_t id = 0;
    std::uint8_t codec = 0;
    std::uint64_t raw_size = 0;
    ImageBuffer data;
  };
  auto read = m_handle.run([&](StoreDatabase& db) -> Result<std::optional<Stored>> {
    auto reader = db.readers.acquire();
    auto stmt = reader->statement(k_read_source_sql);
    JITCACHE_TRY(stmt);
    (*stmt)->bind_blob(1, content_digest.bytes);
    auto row = (*stmt)->step("reading a kept source");
    JITCACHE_TRY(row);
    if (!*row) return std::optional<Stored>();
    Stored stored;
    stored.id = (*stmt)->column_int64(0);
    stored.codec = static_cast<std::uint8_t>((*stmt)->column_int64(1));
    stored.raw_size = static_cast<std::uint64_t>((*stmt)->column_int64(2));
    const proto::Bytes blob = (*stmt)->column_blob(3);
    stored.data.assign(blob.begin(), blob.end());
    return std::optional<Stored>(std::move(stored));
  });
  JITCACHE_TRY(read);
  if (!*read) return std::optional<std::vector<std::uint8_t>>();
  Stored& stored = **read;
  auto decoded = decode_image(stored.codec, std::move(stored.data), stored.raw_size);
  std::string damage;
  if (auto* failure = std::get_if<DecodeFailure>(&decoded)) {
    damage = failure->reason;
  } else if (proto::content_digest(proto::Bytes(std::get<ImageBuffer>(decoded))) != content_digest) {
    damage = "its bytes do not match its content digest";
  }
  if (!damage.empty()) {
    spdlog::warn("store: the kept source {} is damaged ({}): deleted", proto::to_hex(content_digest), damage);
    auto deleted = m_handle.run_write([&](StoreDatabase& db) -> Result<void> {
      std::lock_guard lock(m_handle.writer_mutex());
      for (const char* sql : {k_unlink_source_sql, k_delete_source_sql}) {
        auto stmt = db.writer.statement(sql);
        JITCACHE_TRY(stmt);
        (*stmt)->bind(1, stored.id);
        JITCACHE_TRY((*stmt)->run("deleting a damaged source"));
      }
      return {};
    });
    if (!deleted) spdlog::warn("store: deleting the damaged source: {}", deleted.error().message);
    return std::optional<std::vector<std::uint8_t>>();
  }
  const ImageBuffer& ptx = std::get<ImageBuffer>(decoded);
  return std::optional<std::vector<std::uint8_t>>(std::vector<std::uint8_t>(ptx.begin(), ptx.end()));
}

Result<bool> SqliteSources::has_shared_entry(const proto::Digest256& key_id) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::has_shared_entry));
  return m_handle.run([&](StoreDatabase& db) -> Result<bool> {
    auto reader = db.readers.acquire();
    auto stmt = reader->statement(k_has_shared_entry_sql);
    JITCACHE_TRY(stmt);
    (*stmt)->bind_blob(1, key_id.bytes);
    return (*stmt)->step("looking for a shared entry");
  });
}

Result<std::vector<KnownDriver>> SqliteSources::known_drivers() {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::known_drivers));
  return m_handle.run([&](StoreDatabase& db) -> Result<std::vector<KnownDriver>> {
    auto reader = db.readers.acquire();
    auto stmt = reader->statement(k_known_drivers_sql);
    JITCACHE_TRY(stmt);
    std::vector<KnownDriver> drivers;
    for (;;) {
      auto row = (*stmt)->step("reading the drivers");
      JITCACHE_TRY(row);
      if (!*row) break;
      drivers.push_back(KnownDriver{static_cast<std::uint32_t>((*stmt)->column_int64(0)), (*stmt)->column_text(1),
                                    (*stmt)->column_int64(2)});
    }
    return drivers;
  });
}

Result<bool> SqliteSources::has_entries_of(std::uint32_t driver_api, const std::string& driver_build,
                                           const std::string& arch) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::has_entries_of));
  return m_handle.run([&](StoreDatabase& db) -> Result<bool> {
    auto reader = db.readers.acquire();
    auto stmt = reader->statement(k_has_entries_of_sql);
    JITCACHE_TRY(stmt);
    (*stmt)->bind(1, driver_api);
    (*stmt)->bind_text(2, driver_build);
    (*stmt)->bind_text(3, arch);
    return (*stmt)->step("looking for entries of a driver and arch");
  });
}

}  // namespace jitcache::daemon::store
