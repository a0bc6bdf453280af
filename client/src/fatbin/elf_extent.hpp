// How many bytes an ELF image (a cubin) occupies, computed from its own headers: the end of the
// furthest of its header, section header table, program header table, sections and segments.
//
// Used two ways. With no size (an image pointer as cuModuleLoadData receives it) the result is the
// size to copy or hash; the reads stay inside the extent the ELF header itself claims, so a lying
// header can lead us no further than it would lead the driver. With a known size (a cache hit) it
// checks that the image is whole before the driver sees it: a truncated cubin can crash the driver
// (docs/driver-facts.md §0.1).
// Thread safety: pure functions.
#pragma once

#include <common/result.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace jitcache::client::fatbin {

inline constexpr std::size_t k_elf64_header_size = 64;

// Rationale: a cubin is one module's machine code; 1 GiB is far beyond any real one and keeps a
// garbage header from sending us through the address space.
inline constexpr std::uint64_t k_max_elf_size = std::uint64_t{1} << 30;

// `image` starts with the ELF magic. With `limit`, nothing at or past image + *limit is read and an
// extent beyond it is ErrorCode::corrupt ("truncated"). Only ELF64 little-endian is accepted.
common::Result<std::size_t> elf_extent(const std::byte* image, std::optional<std::size_t> limit);

}  // namespace jitcache::client::fatbin
