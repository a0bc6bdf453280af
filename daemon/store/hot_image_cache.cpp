#include <daemon/store/hot_image_cache.hpp>

#include <cstring>
#include <utility>

namespace jitcache::daemon::store {

HotImageCache::HotImageCache(std::uint64_t budget_bytes) : m_budget(budget_bytes) {}

std::size_t HotImageCache::SelectorHash::operator()(const SelectorKey& key) const {
  // Key ids and fast key ids are SHA-256 outputs: any 8 of their bytes are uniformly distributed.
  std::size_t h = 0;
  std::memcpy(&h, key.id.bytes.data(), sizeof h);
  return h ^ static_cast<std::size_t>(key.by_fast_key);
}

std::optional<HotImageCache::RememberedHit> HotImageCache::find_hit(bool by_fast_key, const proto::Digest256& id) {
  std::lock_guard lock(m_mutex);
  auto it = m_by_selector.find(SelectorKey{by_fast_key, id});
  if (it == m_by_selector.end()) return std::nullopt;
  Slot& slot = *it->second;
  m_lru.splice(m_lru.begin(), m_lru, it->second);
  ++m_hits;
  return RememberedHit{slot.info, slot.image, slot.id, slot.content_fast};
}

void HotImageCache::remember_hit(bool by_fast_key, const proto::Digest256& id, std::int64_t row_id,
                                 const proto::Checksum128& checksum, std::shared_ptr<const proto::EntryInfo> info,
                                 const proto::Checksum128& content_fast, std::uint64_t ticket) {
  std::shared_ptr<const proto::EntryInfo> replaced;  // freed after the lock is dropped
  std::lock_guard lock(m_mutex);
  if (ticket != m_invalidations) return;
  auto row = m_by_id.find(row_id);
  if (row == m_by_id.end() || row->second->checksum != checksum) return;
  const SelectorKey key{by_fast_key, id};
  if (auto known = m_by_selector.find(key); known != m_by_selector.end()) {
    if (known->second == row->second) return;
    // The selector named another row, which no invalidation removed: keep the newer answer.
    std::erase(known->second->selectors, key);
    m_by_selector.erase(known);
  }
  Slot& slot = *row->second;
  replaced = std::exchange(slot.info, std::move(info));
  slot.content_fast = content_fast;
  slot.selectors.push_back(key);
  m_by_selector.emplace(key, row->second);
}

void HotImageCache::forget_selector(bool by_fast_key, const proto::Digest256& id) {
  std::lock_guard lock(m_mutex);
  ++m_invalidations;
  const SelectorKey key{by_fast_key, id};
  auto it = m_by_selector.find(key);
  if (it == m_by_selector.end()) return;
  std::erase(it->second->selectors, key);
  m_by_selector.erase(it);
}

void HotImageCache::forget_hits_of(std::int64_t id) {
  std::lock_guard lock(m_mutex);
  ++m_invalidations;
  if (auto it = m_by_id.find(id); it != m_by_id.end()) forget_selectors_locked(*it->second);
}

void HotImageCache::forget_all_hits() {
  std::lock_guard lock(m_mutex);
  ++m_invalidations;
  for (auto& [key, slot] : m_by_selector) slot->selectors.clear();
  m_by_selector.clear();
}

void HotImageCache::forget_selectors_locked(Slot& slot) {
  for (const SelectorKey& key : slot.selectors) m_by_selector.erase(key);
  slot.selectors.clear();
}

void HotImageCache::release_locked(Lru::iterator slot, Lru& released) {
  forget_selectors_locked(*slot);
  m_bytes -= slot->charge;
  m_by_id.erase(slot->id);
  released.splice(released.end(), m_lru, slot);
}

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
  if (auto it = m_by_id.find(id); it != m_by_id.end()) release_locked(it->second, released);
  m_lru.push_front(Slot{id, checksum, std::move(image), charge, nullptr, {}, {}});
  m_by_id.emplace(id, m_lru.begin());
  m_bytes += charge;
  evict_locked(released);
}

void HotImageCache::evict_locked(Lru& released) {
  while (m_bytes > m_budget && !m_lru.empty()) release_locked(std::prev(m_lru.end()), released);
}

void HotImageCache::invalidate(std::int64_t id) {
  Lru released;
  std::lock_guard lock(m_mutex);
  ++m_invalidations;
  auto it = m_by_id.find(id);
  if (it == m_by_id.end()) return;
  release_locked(it->second, released);
}

void HotImageCache::invalidate_all() {
  Lru released;
  std::lock_guard lock(m_mutex);
  ++m_invalidations;
  released.splice(released.end(), m_lru);
  m_by_id.clear();
  m_by_selector.clear();
  m_bytes = 0;
}

HotImageCacheStats HotImageCache::stats() const {
  std::lock_guard lock(m_mutex);
  return HotImageCacheStats{m_hits, m_misses, m_bytes, static_cast<std::uint64_t>(m_lru.size())};
}

}  // namespace jitcache::daemon::store
