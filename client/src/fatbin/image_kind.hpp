// Classifies an image given as `const void*` with no size, as cuModuleLoadData receives it, and
// determines how many bytes it occupies, so that the rest of the client can work on a bounded span.
//
// How the size is found, per kind:
//   - ELF (cubin), magic 7F 'E' 'L' 'F': the extent its own headers claim (elf_extent.hpp): the end of
//     the furthest of the header, both header tables, every non-NOBITS section and every segment.
//   - fat binary container, magic 0xBA55ED50: 16 + the u64 fat_size in its header. Only the first
//     container is reachable this way: with no size there is no way to know whether another follows.
//   - fat binary wrapper, magic 0x466243B1: the container its data pointer points at, sized as above;
//     the returned span is that container, not the 24-byte wrapper.
//   - anything else is PTX text: up to its terminating NUL (strnlen, capped at 1 GiB); the span
//     excludes the NUL.
// The magic is compared one byte at a time and every magic byte is non-zero, so a PTX string shorter
// than four bytes is never read past its NUL. Beyond that the pointer is trusted as the driver trusts
// it: nothing can tell how much memory lies behind it.
// Thread safety: pure functions.
#pragma once

#include <common/result.hpp>

#include <cstddef>
#include <span>
#include <string_view>

namespace jitcache::client::fatbin {

enum class ImageKind { cubin, fatbin, ptx };

struct ImageView {
  ImageKind kind = ImageKind::ptx;
  std::span<const std::byte> bytes;  // the ELF, the container, or the PTX text without its NUL
  bool via_wrapper = false;          // fatbin only: the image was a wrapper pointing at `bytes`
};

common::Result<ImageView> classify_image(const void* image);

std::string_view image_kind_name(ImageKind kind);

}  // namespace jitcache::client::fatbin
