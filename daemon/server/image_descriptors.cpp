#include <common/result.hpp>
#include <daemon/server/image_descriptors.hpp>

namespace jitcache::daemon::server {

common::Result<std::shared_ptr<const SealedImage>> ImageDescriptors::get(
    const std::shared_ptr<const store::ImageBuffer>& image) {
  {
    std::lock_guard lock(m_mutex);
    if (auto found = m_index.find(image.get()); found != m_index.end()) {
      auto entry = found->second;
      if (entry->image.lock() == image) {
        m_lru.splice(m_lru.begin(), m_lru, entry);
        return entry->sealed;
      }
      // The buffer at this address is another one: its predecessor is gone.
      m_bytes -= entry->sealed->size();
      m_lru.erase(entry);
      m_index.erase(found);
    }
  }
  // Copied outside the lock: two threads may both copy one image, and the second insert wins.
  auto sealed = SealedImage::create(*image);
  JITCACHE_TRY(sealed);
  std::lock_guard lock(m_mutex);
  ++m_created;
  if ((*sealed)->size() > m_budget || m_max_count == 0) return sealed;  // served once, not kept
  if (auto found = m_index.find(image.get()); found != m_index.end()) {
    m_bytes -= found->second->sealed->size();
    m_lru.erase(found->second);
    m_index.erase(found);
  }
  m_lru.push_front(Entry{image.get(), image, *sealed});
  m_index[image.get()] = m_lru.begin();
  m_bytes += (*sealed)->size();
  evict_to_budget();
  return sealed;
}

void ImageDescriptors::evict_to_budget() {
  while ((m_bytes > m_budget || m_lru.size() > m_max_count) && !m_lru.empty()) {
    m_bytes -= m_lru.back().sealed->size();
    m_index.erase(m_lru.back().key);
    m_lru.pop_back();
  }
}

std::uint64_t ImageDescriptors::bytes() const {
  std::lock_guard lock(m_mutex);
  return m_bytes;
}

std::size_t ImageDescriptors::count() const {
  std::lock_guard lock(m_mutex);
  return m_lru.size();
}

std::uint64_t ImageDescriptors::created() const {
  std::lock_guard lock(m_mutex);
  return m_created;
}

}  // namespace jitcache::daemon::server
