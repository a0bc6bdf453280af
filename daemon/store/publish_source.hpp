// PublishSource: what the published images (daemon/publish/) are made from and kept honest by —
// the store's answer to "may this row be published", a hit of a published copy (HIT_NOTE), and the
// notice of every row a write replaces or deletes. Only the publisher and HIT_NOTE use it.
//
// Thread safety: every method may be called from any thread; on_row_dropped only before the store
// is shared between threads. The listener runs on the thread of the write that dropped the row,
// after its commit, and must not wait for another store call to finish.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include <common/result.hpp>
#include <proto/digest.hpp>
#include <proto/key.hpp>
#include <proto/messages.hpp>

namespace jitcache::daemon::store {

using common::Result;

// Told the id of every row a write replaces or deletes (a PUT over an entry, REMOVE, a quarantine,
// a corrupt entry deleted, eviction), after the write commits and before the next write can start.
// A row id names one (key id, namespace) at a time; whoever keeps copies of entries by row id (the
// published images, daemon/publish/) drops them here.
using RowDropped = std::function<void(std::int64_t row_id)>;
// Told instead of a row id when every row is gone at once: a corrupt database was set aside and
// replaced by an empty one, or the store was reopened on other files (recovering_database.hpp), so
// row ids start again and name other entries.
inline constexpr std::int64_t k_every_row = -1;

class PublishSource {
 public:
  virtual ~PublishSource() = default;

  // The metadata of row `row_id` if it is a live entry of the shared namespace whose fast key id is
  // `fast_key_id`: the only rows that may be published.
  virtual Result<std::optional<proto::EntryInfo>> publishable_entry(std::int64_t row_id,
                                                                    const proto::Digest256& fast_key_id) = 0;
  // A client loaded the published copy of the live shared entry with this fast key (HIT_NOTE):
  // counted as a lookup hit would be (hits, last use), without reading the image. nullopt: no
  // such entry (removed or quarantined since it was published).
  virtual Result<std::optional<proto::EntryInfo>> note_published_hit(const proto::Digest256& fast_key_id) = 0;
  // Installs the one listener of dropped rows (RowDropped); null removes it.
  virtual void on_row_dropped(RowDropped listener) = 0;
};

}  // namespace jitcache::daemon::store
