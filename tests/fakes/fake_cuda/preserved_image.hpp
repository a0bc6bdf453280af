// The caller memory a library loaded with CU_LIBRARY_BINARY_IS_PRESERVED still depends on.
//
// With that option the driver may skip its own copy of the image and read the caller's bytes at any
// time until cuLibraryUnload (docs/driver-facts.md §6). The fake keeps a
// copy all the same (it loaded from one), but remembers where the image lay and a SHA-256 of every
// region, and the library calls check them again: memory that changed or was unmapped before
// cuLibraryUnload is a caller bug the real driver might turn into wrong code or a crash, and the fake
// makes it visible (CUDA_ERROR_ILLEGAL_STATE and a warning). Reads go through caller_memory, so an
// unmapped region is reported, never faulted on.
// Thread safety: immutable after construction; changed() only reads.
#pragma once

#include <proto/digest.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace jitcache::fakes::fake_cuda {

// A range of the caller's memory an image occupies: a cubin's ELF extent, PTX and its NUL, a fat
// binary container, the nvcc wrapper that points at one.
struct CallerRegion {
  const void* address = nullptr;
  std::size_t size = 0;
};

class PreservedImage {
 public:
  // Digests every region as it reads now; a region that cannot be read is remembered as such.
  explicit PreservedImage(const std::vector<CallerRegion>& regions);

  // nullopt while every region reads as it did; otherwise what changed ("the 4,096 bytes at
  // 0x7f... changed", "... are no longer readable").
  std::optional<std::string> changed() const;

 private:
  struct Watched {
    CallerRegion region;
    std::optional<proto::Digest256> digest;  // nullopt: unreadable when the library was loaded
  };
  std::vector<Watched> m_regions;
};

}  // namespace jitcache::fakes::fake_cuda
