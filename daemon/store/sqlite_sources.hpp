// SqliteSources: the kept sources (sources.hpp, schema 0009) on the store's database, beside
// SqliteStore over the same handle (store_handle.hpp). It reads them back for the re-JIT, and
// keeps a PUT's source for SqliteStore::put: encode() before the writer lock, keep_locked() after
// the entry's commit, dropping the least valuable sources while over source_budget.
//
// Thread safety: every method may be called from any thread at once. The Sources reads each
// borrow one of the store's read connections; a damaged source's deletion, and keep_locked (called
// with the writer mutex held, as its name says), write on the single writer.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <daemon/store/entry_upkeep.hpp>
#include <daemon/store/image_buffer.hpp>
#include <daemon/store/image_codec.hpp>
#include <daemon/store/sources.hpp>
#include <daemon/store/store.hpp>
#include <daemon/store/store_handle.hpp>

namespace jitcache::daemon::store {

// A PUT's source made ready before the writer lock: compressed, or with no data when a source of
// its content is kept already and only the entry's link is written.
struct EncodedSource {
  proto::Digest256 content_digest;
  std::string worker_options;
  std::uint64_t raw_size = 0;
  Codec codec = Codec::zstd;
  ImageBuffer data;
};

class SqliteSources final : public Sources {
 public:
  // `budget`: source_budget in bytes, compressed (0: none kept). `upkeep` writes the entries'
  // usage before sources are ranked by it.
  SqliteSources(StoreHandle& handle, EntryUpkeep& upkeep, std::uint64_t budget, std::function<std::int64_t()> clock);

  // Sources.
  Result<std::vector<HotEntry>> hot_set(const HotSetQuery& query) override;
  Result<std::optional<std::vector<std::uint8_t>>> kept_source(const proto::Digest256& content_digest) override;
  Result<bool> has_shared_entry(const proto::Digest256& key_id) override;
  Result<std::vector<KnownDriver>> known_drivers() override;
  Result<bool> has_entries_of(std::uint32_t driver_api, const std::string& driver_build,
                              const std::string& arch) override;

  // The PUT's source to keep, compressed before the writer lock; nullopt: none to keep (no source,
  // not shared, no budget, or alone over the budget: counted as dropped).
  std::optional<EncodedSource> encode(const PutInput& input);
  // Under the writer mutex, after the entry's commit: keeps the source and links the entry to it,
  // then drops the least valuable sources while over the budget. Failures are logged: a source
  // that cannot be kept costs a later re-JIT, never the PUT.
  void keep_locked(StoreDatabase& db, std::int64_t entry_id, const EncodedSource& source);

  // Sources dropped, or never kept, to stay within the budget (Totals::sources_dropped).
  std::uint64_t dropped() const { return m_dropped.load(std::memory_order_relaxed); }

 private:
  Result<void> trim_locked(StoreDatabase& db);

  StoreHandle& m_handle;
  EntryUpkeep& m_upkeep;
  const std::uint64_t m_budget;
  const std::function<std::int64_t()> m_clock;
  std::atomic<std::uint64_t> m_dropped{0};
};

}  // namespace jitcache::daemon::store
