// How an entries row (docs/entry-format.md) becomes a proto::EntryInfo: the column list every
// metadata SELECT uses, in one place, and the function that reads it back.
//
// Thread safety: pure functions over a statement the caller owns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <proto/digest.hpp>
#include <proto/messages.hpp>

#include <daemon/store/sqlite_db.hpp>

namespace jitcache::daemon::store {

// The row's id, then every EntryInfo field, then content_fast, in read_entry_row's order. Never
// touches blobs.
inline constexpr char k_entry_columns[] =
    "id, key_id, namespace, key_schema, content_digest, arch, driver_api, driver_build, options, producer, "
    "codec, raw_size, stored_size, checksum, created_at_ms, last_used_at_ms, hits, compile_time_us, "
    "quarantined_at_ms, content_fast";

struct EntryRow {
  std::int64_t id = 0;
  proto::EntryInfo info;
  proto::Checksum128 content_fast;  // the fast key's content (schema 3; every row's since schema 7)
};

// nullopt when a fixed-size column has the wrong size: only a file edited behind SQLite's CHECK
// constraints can hold one, and the caller decides whether that is a corrupt entry or a corrupt
// database.
std::optional<EntryRow> read_entry_row(const Statement& stmt);

// "entry <key id hex> in namespace <n>", as the store's messages and logs name one.
std::string describe_entry(const proto::Digest256& key_id, std::uint32_t namespace_id);

}  // namespace jitcache::daemon::store
