#include <daemon/store/recent_evictions.hpp>

#include <daemon/store/store.hpp>

namespace jitcache::daemon::store {

void RecentEvictions::record(const std::vector<EvictedEntry>& evicted, std::int64_t now_ms) {
  std::lock_guard lock(m_mutex);
  for (EvictedEntry entry : evicted) {
    entry.evicted_at_ms = now_ms;
    const std::uint32_t owner = entry.namespace_id;
    m_ring.push(owner, std::move(entry));
  }
}

std::vector<EvictedEntry> RecentEvictions::newest(std::size_t limit, bool all_namespaces,
                                                  std::uint32_t own_namespace) const {
  std::lock_guard lock(m_mutex);
  return m_ring.newest(limit, [&](std::uint32_t ns, const EvictedEntry&) {
    return all_namespaces || ns == k_shared_namespace || ns == own_namespace;
  });
}

std::vector<EvictedEntry> RecentEvictions::of_key(const proto::Digest256& key_id) const {
  std::lock_guard lock(m_mutex);
  return m_ring.newest(k_recent_evictions,
                       [&](std::uint32_t, const EvictedEntry& entry) { return entry.key_id == key_id; });
}

}  // namespace jitcache::daemon::store
