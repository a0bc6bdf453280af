// ImageDescriptors: the sealed memfd copies (sealed_image.hpp) of the images recently served by
// descriptor, so that an image asked for again is not copied into a new memfd.
//
// Keyed by the image buffer's address, checked against a weak pointer: the store's hot image cache
// hands out the same buffer for every hit of an entry, and a buffer that has been freed (its address
// possibly reused) never matches. Bounded by bytes and by count, least recently used first; a
// descriptor being sent stays open, because the sender holds its own reference.
// Rationale for the count: each entry holds a file descriptor, and distinct images of 64 KiB fill
// the byte budget only after thousands of them; bounded by bytes alone, 985 LOOKUPs of distinct
// images once took every descriptor the daemon had, so accept and memfd_create failed. The count
// comes from the descriptor limit (server/descriptor_plan.hpp).
// Thread safety: every method may be called from any thread (one mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <common/result.hpp>

#include <daemon/server/sealed_image.hpp>
#include <daemon/store/image_buffer.hpp>

namespace jitcache::daemon::server {

class ImageDescriptors {
 public:
  // `max_count` 0: nothing is kept (each memfd is made for one reply).
  ImageDescriptors(std::uint64_t budget_bytes, std::size_t max_count)
      : m_budget(budget_bytes), m_max_count(max_count) {}

  common::Result<std::shared_ptr<const SealedImage>> get(const std::shared_ptr<const store::ImageBuffer>& image);

  std::uint64_t bytes() const;
  std::size_t count() const;      // memfds kept now
  std::uint64_t created() const;  // memfds made since start

 private:
  struct Entry {
    const store::ImageBuffer* key;
    std::weak_ptr<const store::ImageBuffer> image;
    std::shared_ptr<const SealedImage> sealed;
  };
  void evict_to_budget();

  const std::uint64_t m_budget;
  const std::size_t m_max_count;
  mutable std::mutex m_mutex;
  std::list<Entry> m_lru;  // most recently used first
  std::unordered_map<const store::ImageBuffer*, std::list<Entry>::iterator> m_index;
  std::uint64_t m_bytes = 0;
  std::uint64_t m_created = 0;
};

}  // namespace jitcache::daemon::server
