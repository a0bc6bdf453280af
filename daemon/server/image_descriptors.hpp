// ImageDescriptors: the sealed memfd copies (sealed_image.hpp) of the images recently served by
// descriptor, so that an image asked for again is not copied into a new memfd.
//
// Keyed by the image buffer's address, checked against a weak pointer: the store's hot image cache
// hands out the same buffer for every hit of an entry, and a buffer that has been freed (its address
// possibly reused) never matches. Bounded by bytes, least recently used first; a descriptor being
// sent stays open, because the sender holds its own reference.
// Thread safety: every method may be called from any thread (one mutex).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <jitcache/proto/result.hpp>

#include <daemon/server/sealed_image.hpp>
#include <daemon/store/image_buffer.hpp>

namespace jitcache::daemon::server {

class ImageDescriptors {
 public:
  explicit ImageDescriptors(std::uint64_t budget_bytes) : m_budget(budget_bytes) {}

  proto::Result<std::shared_ptr<const SealedImage>> get(const std::shared_ptr<const store::ImageBuffer>& image);

  std::uint64_t bytes() const;
  std::uint64_t created() const;  // memfds made since start

 private:
  struct Entry {
    const store::ImageBuffer* key;
    std::weak_ptr<const store::ImageBuffer> image;
    std::shared_ptr<const SealedImage> sealed;
  };
  void evict_to_budget();

  const std::uint64_t m_budget;
  mutable std::mutex m_mutex;
  std::list<Entry> m_lru;  // most recently used first
  std::unordered_map<const store::ImageBuffer*, std::list<Entry>::iterator> m_index;
  std::uint64_t m_bytes = 0;
  std::uint64_t m_created = 0;
};

}  // namespace jitcache::daemon::server
