#include <daemon/store/hot_image_cache.hpp>

#include <utility>

namespace jitcache::daemon::store {

HotImageCache::HotImageCache(std::uint64_t budget_bytes) : m_budget(budget_bytes) {}

HotImageCache::Image HotImageCache::find(std::int64_t id, const proto::Checksum128& checksum, std::uint64_t raw_size) {
  std::lock_guard lock(m_mutex);
  auto it = m_by_id.find(id);
  if (it == m_by_id.end() || it->second->checksum != checksum || it->second->image->size() != raw_size) {
    ++m_misses;
    return nullptr;
  }
  m_lru.splice(m_lru.begin(), m_lru, it->second);
  ++m_hits;
  return it->second->image;
}

std::uint64_t HotImageCache::read_ticket() const {
  std::lock_guard lock(m_mutex);
  return m_invalidations;
}

void HotImageCache::insert(std::int64_t id, const proto::Checksum128& checksum, Image image, std::uint64_t ticket) {
  if (!image) return;
  const std::uint64_t charge = image->size() + k_entry_overhead_bytes;
  if (charge > m_budget) return;

  Lru released;  // freed after the lock is dropped, in its destructor
  std::lock_guard lock(m_mutex);
  if (ticket != m_invalidations) return;
  if (auto it = m_by_id.find(id); it != m_by_id.end()) {
    m_bytes -= it->second->charge;
    released.splice(released.end(), m_lru, it->second);
    m_by_id.erase(it);
  }
  m_lru.push_front(Slot{id, checksum, std::move(image), charge});
  m_by_id.emplace(id, m_lru.begin());
  m_bytes += charge;
  evict_locked(released);
}

void HotImageCache::evict_locked(Lru& released) {
  while (m_bytes > m_budget && !m_lru.empty()) {
    auto oldest = std::prev(m_lru.end());
    m_bytes -= oldest->charge;
    m_by_id.erase(oldest->id);
    released.splice(released.end(), m_lru, oldest);
  }
}

void HotImageCache::invalidate(std::int64_t id) {
  Lru released;
  std::lock_guard lock(m_mutex);
  ++m_invalidations;
  auto it = m_by_id.find(id);
  if (it == m_by_id.end()) return;
  m_bytes -= it->second->charge;
  released.splice(released.end(), m_lru, it->second);
  m_by_id.erase(it);
}

void HotImageCache::invalidate_all() {
  Lru released;
  std::lock_guard lock(m_mutex);
  ++m_invalidations;
  released.splice(released.end(), m_lru);
  m_by_id.clear();
  m_bytes = 0;
}

HotImageCacheStats HotImageCache::stats() const {
  std::lock_guard lock(m_mutex);
  return HotImageCacheStats{m_hits, m_misses, m_bytes, static_cast<std::uint64_t>(m_lru.size())};
}

}  // namespace jitcache::daemon::store
