// EntryUpkeep: what the store's entry core (SqliteStore) does for the classes beside it that write
// on the same writer (store_handle.hpp): the usage kept in memory written out before something is
// ranked by it, room made by eviction before entries come in, and the in-memory views of rows
// (the hot image cache, the RowDropped listener) told of rows written. SqliteSources and
// SqliteEntryTransfer use it; it keeps the usage, eviction and the caches in one class, so that an
// import makes room and drops cached images exactly as a PUT does.
//
// Thread safety: every method is called with the handle's writer mutex held, inside a run of the
// handle, on the database that run was given.
#pragma once

#include <cstdint>
#include <span>

#include <common/result.hpp>
#include <proto/digest.hpp>

#include <daemon/store/store_database.hpp>

namespace jitcache::daemon::store {

class EntryUpkeep {
 public:
  virtual ~EntryUpkeep() = default;

  // Writes the hits, last uses and asked drivers kept in memory (Maintenance::flush_usage).
  virtual Result<void> flush_usage_locked(StoreDatabase& db) = 0;
  // Before `stored_bytes` more (`quota_bytes` as the namespace quota counts them) come into
  // `namespace_id` as new entries: evicts over the namespace's quota when one applies to it (an
  // untrusted namespace, namespace_quota set), then over max_size, each eviction committed on its
  // own (namespace_quota.hpp, eviction.hpp).
  virtual Result<void> make_room_locked(StoreDatabase& db, std::uint32_t namespace_id, std::uint64_t quota_bytes,
                                        std::uint64_t stored_bytes) = 0;
  // After the commit that wrote `rows`: their cached images and remembered answers are stale, and
  // a lookup by one of `shared_fast_key_ids` now serves a new shared row.
  virtual void rows_written_locked(std::span<const std::int64_t> rows,
                                   std::span<const proto::Digest256> shared_fast_key_ids) = 0;
};

}  // namespace jitcache::daemon::store
