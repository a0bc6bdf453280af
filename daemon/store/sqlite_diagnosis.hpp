// SqliteDiagnosis: EXPLAIN's and MISSES' questions (diagnosis.hpp) on the store's database, beside
// SqliteStore over the same handle (store_handle.hpp): the entries near a key, read by index probes
// (near_entries_sql.hpp), and the ring of recent evictions, which SqliteStore's eviction fills
// (recent_evictions.hpp).
//
// Thread safety: every method may be called from any thread at once; near_entries borrows one of
// the store's read connections; the evictions come from the ring, which has its own lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <daemon/store/diagnosis.hpp>
#include <daemon/store/recent_evictions.hpp>
#include <daemon/store/store_handle.hpp>

namespace jitcache::daemon::store {

class SqliteDiagnosis final : public Diagnosis {
 public:
  SqliteDiagnosis(StoreHandle& handle, const RecentEvictions& evictions) : m_handle(handle), m_evictions(evictions) {}

  Result<std::vector<NearEntry>> near_entries(const proto::Digest256& key_id,
                                              const std::optional<proto::Digest256>& content, const Visibility& who,
                                              std::uint32_t caller_uid, unsigned limit) override;
  std::vector<EvictedEntry> recent_evictions(std::size_t limit, const Visibility& who) override;
  std::vector<EvictedEntry> evictions_of(const proto::Digest256& key_id) override;

 private:
  StoreHandle& m_handle;
  const RecentEvictions& m_evictions;
};

}  // namespace jitcache::daemon::store
