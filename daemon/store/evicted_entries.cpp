#include <daemon/store/evicted_entries.hpp>

#include <algorithm>
#include <optional>

namespace jitcache::daemon::store {

namespace {

constexpr char k_evicted_fields_sql[] =
    "SELECT key_id, namespace, key_schema, content_digest, arch, driver_api, driver_build, options, stored_size,"
    " hits, compile_time_us FROM entries WHERE id = ?1";

template <std::size_t N>
bool copy_fixed(proto::Bytes column, std::array<std::uint8_t, N>& out) {
  if (column.size() != N) return false;
  std::copy(column.begin(), column.end(), out.begin());
  return true;
}

Result<std::optional<EvictedEntry>> read_evicted_fields(SqliteDb& writer, std::int64_t id, EvictionReason reason) {
  auto stmt = writer.statement(k_evicted_fields_sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind(1, id);
  auto row = (*stmt)->step("reading the key of an entry to evict");
  JITCACHE_TRY(row);
  if (!*row) return std::optional<EvictedEntry>();
  const Statement& s = **stmt;
  EvictedEntry entry;
  // A key id or digest of the wrong size (a file edited behind the CHECK constraints) leaves zeros:
  // the record is for people to read, and the entry goes either way.
  copy_fixed(s.column_blob(0), entry.key_id.bytes);
  entry.namespace_id = static_cast<std::uint32_t>(s.column_int64(1));
  entry.key.key_schema = static_cast<std::uint16_t>(s.column_int64(2));
  copy_fixed(s.column_blob(3), entry.key.content.bytes);
  entry.key.arch = s.column_text(4);
  entry.key.driver_api = static_cast<std::uint32_t>(s.column_int64(5));
  entry.key.driver_build = s.column_text(6);
  entry.key.options = s.column_text(7);
  entry.stored_bytes = static_cast<std::uint64_t>(s.column_int64(8));
  entry.hits = static_cast<std::uint64_t>(s.column_int64(9));
  entry.compile_time_us = static_cast<std::uint64_t>(s.column_int64(10));
  entry.reason = reason;
  return std::optional<EvictedEntry>(std::move(entry));
}

}  // namespace

Result<void> remove_evicted_entry(SqliteDb& writer, std::int64_t id, EvictionReason reason,
                                  std::vector<EvictedEntry>& evicted) {
  auto fields = read_evicted_fields(writer, id, reason);
  JITCACHE_TRY(fields);
  JITCACHE_TRY(remove_entry(writer, id));
  if (writer.changes() != 0 && fields->has_value()) evicted.push_back(std::move(**fields));
  return {};
}

}  // namespace jitcache::daemon::store
