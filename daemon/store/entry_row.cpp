#include <daemon/store/entry_row.hpp>

#include <algorithm>
#include <array>

namespace jitcache::daemon::store {

namespace {

template <std::size_t N>
bool copy_fixed(proto::Bytes column, std::array<std::uint8_t, N>& out) {
  if (column.size() != N) return false;
  std::copy(column.begin(), column.end(), out.begin());
  return true;
}

}  // namespace

std::string describe_entry(const proto::Digest256& key_id, std::uint32_t namespace_id) {
  return "entry " + proto::to_hex(key_id) + " in namespace " + std::to_string(namespace_id);
}

std::optional<EntryRow> read_entry_row(const Statement& stmt) {
  EntryRow row;
  proto::EntryInfo& info = row.info;
  row.id = stmt.column_int64(0);
  if (!copy_fixed(stmt.column_blob(1), info.key_id.bytes)) return std::nullopt;
  info.namespace_id = static_cast<std::uint32_t>(stmt.column_int64(2));
  info.key.key_schema = static_cast<std::uint16_t>(stmt.column_int64(3));
  if (!copy_fixed(stmt.column_blob(4), info.key.content.bytes)) return std::nullopt;
  info.key.arch = stmt.column_text(5);
  info.key.driver_api = static_cast<std::uint32_t>(stmt.column_int64(6));
  info.key.driver_build = stmt.column_text(7);
  info.key.options = stmt.column_text(8);
  info.producer = stmt.column_text(9);
  info.codec = static_cast<std::uint8_t>(stmt.column_int64(10));
  info.raw_size = static_cast<std::uint64_t>(stmt.column_int64(11));
  info.stored_size = static_cast<std::uint64_t>(stmt.column_int64(12));
  if (!copy_fixed(stmt.column_blob(13), info.checksum.bytes)) return std::nullopt;
  info.created_at_ms = stmt.column_int64(14);
  info.last_used_at_ms = stmt.column_int64(15);
  info.hits = static_cast<std::uint64_t>(stmt.column_int64(16));
  info.compile_time_us = static_cast<std::uint64_t>(stmt.column_int64(17));
  info.quarantined_at_ms = stmt.column_is_null(18) ? 0 : stmt.column_int64(18);  // NULL: live
  // NULL only in a file an older jitcached wrote without it and no newer one opened since.
  if (!stmt.column_is_null(19) && !copy_fixed(stmt.column_blob(19), row.content_fast.bytes)) return std::nullopt;
  return row;
}

}  // namespace jitcache::daemon::store
