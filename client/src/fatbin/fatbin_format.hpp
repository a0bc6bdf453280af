// The on-disk layout of an NVIDIA fat binary, as far as jitcache reads it: the host-side wrapper,
// the container header and the entry header, with the constants the walker checks.
//
// Nothing here is published by NVIDIA as a stable format. Every value is cited from
// docs/driver-facts.md §3 (fatbinary_section.h, ZLUDA, measurements with the
// CUDA 13.0 fatbinary) and docs/fatbin.md repeats the tables. All integers are little-endian.
// Thread safety: constants only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace jitcache::client::fatbin {

// Host-side wrapper emitted by nvcc into .nvFatBinSegment (docs/driver-facts.md §3 "Host-side wrapper"):
//   i32 magic; i32 version; const u64* data; void* filename_or_fatbins;   (24 bytes on LP64)
inline constexpr std::uint32_t k_wrapper_magic = 0x466243B1;
inline constexpr std::uint32_t k_wrapper_version_min = 1;  // FATBINC_VERSION
inline constexpr std::uint32_t k_wrapper_version_max = 2;  // FATBINC_LINK_VERSION (prelinked array)
inline constexpr std::size_t k_wrapper_size = 24;
inline constexpr std::size_t k_wrapper_data_offset = 8;

// Container header (docs/driver-facts.md §3 "Container header"): u32 magic; u16 version; u16 header_size;
// u64 fat_size, the number of bytes after the header. Containers are 8-byte aligned and a
// .nv_fatbin section holds several back to back.
inline constexpr std::uint32_t k_container_magic = 0xBA55ED50;
inline constexpr std::uint32_t k_old_style_magic = 0x1EE55A01;  // pre-CUDA-4, not supported
inline constexpr std::uint16_t k_container_version = 1;
inline constexpr std::size_t k_container_header_min = 16;
inline constexpr std::size_t k_container_alignment = 8;

// Entry header (docs/driver-facts.md §3 "Entry header"), offsets from the start of the entry header. The
// header is variable-sized (64 to 128 bytes seen); its size is the field at offset 4. Offsets that
// point at strings (options, file name) are relative to the start of the entry header and the
// strings lie inside the header.
namespace entry_field {
inline constexpr std::size_t kind = 0;                 // u16
inline constexpr std::size_t header_size = 4;          // u32
inline constexpr std::size_t payload_size = 8;         // u64, padded; next entry at header + this
inline constexpr std::size_t compressed_size = 16;     // u32, 0 when uncompressed
inline constexpr std::size_t options_descriptor = 20;  // u32, offset of {u32 off, u32 len}; 0 = none
inline constexpr std::size_t version_minor = 24;       // u16
inline constexpr std::size_t version_major = 26;       // u16
inline constexpr std::size_t arch = 28;                // u32, SM number (80, 90, 100 ...)
inline constexpr std::size_t name_offset = 32;         // u32
inline constexpr std::size_t name_length = 36;         // u32
inline constexpr std::size_t flags = 40;               // u64
inline constexpr std::size_t uncompressed_size = 56;   // u64
}  // namespace entry_field
inline constexpr std::size_t k_entry_header_min = 64;

// Entry kinds (u16 at offset 0).
inline constexpr std::uint16_t k_kind_ptx = 1;
inline constexpr std::uint16_t k_kind_cubin = 2;
inline constexpr std::uint16_t k_kind_lto_ir = 8;  // [E] code=lto_90

// Entry flags (u64 at offset 40).
inline constexpr std::uint64_t k_flag_64bit = 0x1;
inline constexpr std::uint64_t k_flag_debug = 0x2;
inline constexpr std::uint64_t k_flag_lz4 = 0x2000;
inline constexpr std::uint64_t k_flag_zstd = 0x8000;
inline constexpr std::uint64_t k_flag_arch_specific = 0x100000;  // sm_XYa / compute_XYa [E-local]
inline constexpr std::uint64_t k_flag_family = 0x200000;         // sm_XYf / compute_XYf [E-local]

// Rationale: a fat binary entry is one kernel module; nothing real comes near 1 GiB, and the cap
// keeps a lying "uncompressed size" from making the client allocate without bound.
inline constexpr std::uint64_t k_default_max_decompressed = std::uint64_t{1} << 30;

}  // namespace jitcache::client::fatbin
