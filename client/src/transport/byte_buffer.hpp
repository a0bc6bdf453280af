// The buffer a reply (and a fetched image) is received into.
//
// Rationale: a cache hit runs in a fresh process, where every page of a new buffer is a page fault
// on first touch, and std::vector<uint8_t>(n) touches each one twice (zero-fill, then the socket
// read). For a 1.6 MB cubin that was ~1 ms of the hit on the H200 host; mapping large buffers with
// MAP_POPULATE (the kernel fills in all pages in one call, already zero) and not zero-filling them
// again costs ~0.4 ms (docs/benchmarks.md). Small buffers come from the heap as usual. Elements are
// default-initialised, i.e. not written: every user fills a buffer completely before reading it.
// Thread safety: a value type, like std::vector.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace jitcache::client::transport {

template <class T>
struct PrefaultingAllocator {
  using value_type = T;
  static constexpr std::size_t k_map_threshold = 256 * 1024;

  PrefaultingAllocator() noexcept = default;
  template <class U>
  PrefaultingAllocator(const PrefaultingAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < k_map_threshold) return std::allocator<T>().allocate(n);
    void* mapped = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (mapped == MAP_FAILED) throw std::bad_alloc();
    return static_cast<T*>(mapped);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < k_map_threshold) {
      std::allocator<T>().deallocate(p, n);
    } else {
      ::munmap(p, bytes);
    }
  }
  // Default-initialisation: resize() leaves bytes unwritten instead of zero-filling them.
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const PrefaultingAllocator<U>&) const noexcept {
    return true;
  }
};

using ByteBuffer = std::vector<std::uint8_t, PrefaultingAllocator<std::uint8_t>>;

// Byte-wise comparison with a plain vector (found by argument-dependent lookup through the
// allocator), so code and tests can compare a received image with the bytes they expect.
inline bool operator==(const ByteBuffer& a, const std::vector<std::uint8_t>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace jitcache::client::transport
