// ImageBuffer: the bytes of one stored image as the store hands them out (Hit, the hot image
// cache, the server's scatter-gather send). A std::vector whose resize() leaves new bytes
// uninitialised, because every byte is overwritten by the blob read that follows.
//
// Rationale: a zero-filled vector made every cold LOOKUP memset the whole image (and first-touch its
// pages) only for sqlite3_blob_read to overwrite it; for a 1.6 MB cubin that was a large share of
// the daemon's CPU per request (docs/benchmarks.md). A vector, rather than a raw array, keeps
// size(), data() and asio::buffer() as they were.
//
// Thread safety: a plain value type; shared read-only through std::shared_ptr<const ImageBuffer>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace jitcache::daemon::store {

// std::allocator, except that construct() with no arguments default-initialises: for a trivial type
// such as std::uint8_t, that means "leave it as it is".
template <class T>
class DefaultInitAllocator {
 public:
  using value_type = T;

  DefaultInitAllocator() noexcept = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)

  T* allocate(std::size_t n) { return std::allocator<T>{}.allocate(n); }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>{}.deallocate(p, n); }

  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    std::construct_at(p, std::forward<Args>(args)...);
  }

  template <class U>
  bool operator==(const DefaultInitAllocator<U>&) const noexcept {
    return true;
  }
};

using ImageBuffer = std::vector<std::uint8_t, DefaultInitAllocator<std::uint8_t>>;

}  // namespace jitcache::daemon::store
