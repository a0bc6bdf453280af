// SqliteEntryTransfer: bundles' entries in and out of the store's database (entry_transfer.hpp),
// beside SqliteStore over the same handle (store_handle.hpp). An export reads one snapshot on a
// connection it opens for itself; an import writes in one transaction on the single writer, after
// making room as a PUT does (entry_upkeep.hpp), and drops the cached images of the rows it wrote.
//
// Thread safety: every method may be called from any thread at once. presence() borrows one of the
// store's read connections; export_entries() holds none of them; import_entries() holds the
// handle's writer mutex for its whole transaction, so PUTs wait for it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include <daemon/store/entry_transfer.hpp>
#include <daemon/store/entry_upkeep.hpp>
#include <daemon/store/store_handle.hpp>

namespace jitcache::daemon::store {

class SqliteEntryTransfer final : public EntryTransfer {
 public:
  // `max_size_bytes` and `namespace_quota_bytes` as SqliteStoreOptions: an import that could never
  // fit is too_large before anything is written (0: no limit).
  SqliteEntryTransfer(StoreHandle& handle, EntryUpkeep& upkeep, std::uint64_t max_size_bytes,
                      std::uint64_t namespace_quota_bytes, std::function<std::int64_t()> clock);

  Result<std::uint64_t> export_entries(const ExportFilter& filter,
                                       const std::function<Result<void>(std::uint64_t)>& begin,
                                       const std::function<Result<void>(const bundle::BundleEntry&)>& each) override;
  Result<KeyPresence> presence(std::uint32_t namespace_id, const proto::Digest256& key_id) override;
  Result<ImportCounts> import_entries(const ImportOptions& options,
                                      const std::function<Result<std::optional<bundle::BundleEntry>>()>& next) override;

 private:
  StoreHandle& m_handle;
  EntryUpkeep& m_upkeep;
  const std::uint64_t m_max_size_bytes;
  const std::uint64_t m_namespace_quota;
  const std::function<std::int64_t()> m_clock;
};

}  // namespace jitcache::daemon::store
