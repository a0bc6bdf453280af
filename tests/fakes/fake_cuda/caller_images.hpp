// The image handed to cuModuleLoadData, which comes with no size: what kind it is, and a copy of
// exactly the bytes it occupies, taken without reading past the memory that is really there.
//
// Sizes come from the image's own headers, as the driver must get them: the ELF header tables and the
// furthest section or segment for a cubin; 16 + fat_size for a fat binary container; for the nvcc
// wrapper (0x466243B1) the container its data pointer points at. Reads go through caller_memory, so an
// image cut short before an unmapped page is an Error ("truncated"), not a crash.
// Thread safety: pure functions.
#pragma once

#include <common/result.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace jitcache::fakes::fake_cuda {

enum class CallerImageKind { cubin, fatbin_container, fatbin_wrapper, text, unreadable };

// Looks at up to four bytes, one at a time, stopping at a NUL (a short PTX string is never overread).
CallerImageKind classify_caller_image(const void* image);

// A fat binary container and where it lies: the image itself, or what a wrapper's data points at.
struct CallerFatbin {
  std::vector<std::byte> container;
  const void* container_address = nullptr;
};

// ErrorCode::corrupt when the headers are malformed or the image is cut short.
common::Result<std::vector<std::byte>> copy_cubin_from_caller(const void* image);
common::Result<CallerFatbin> copy_fatbin_from_caller(const void* image, CallerImageKind kind);

}  // namespace jitcache::fakes::fake_cuda
