// Parses a fat binary into its entries: one or more containers back to back, or the nvcc wrapper
// that points at one. Pure parsing, no driver calls.
//
// Every length and offset read from the input is checked against the buffer before it is used; a
// truncated, lying or overlapping structure is an Error naming the field and its offset
// (ErrorCode::corrupt), input that is not a fat binary at all is ErrorCode::invalid_argument, and
// an entry whose uncompressed size passes the cap is ErrorCode::too_large.
// Thread safety: pure functions; the returned entries may view the input buffer (see Entry).
#pragma once

#include <client/src/fatbin/fatbin_entry.hpp>
#include <client/src/fatbin/fatbin_format.hpp>
#include <common/result.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace jitcache::client::fatbin {

struct ReadLimits {
  std::uint64_t max_decompressed = k_default_max_decompressed;  // per entry
  // Leave compressed entries compressed (Entry::compressed set, Entry::bytes empty) until
  // decompress_entry() is asked for one. Rationale: choosing the image for a device needs only the
  // entry headers, and a framework's fat binary holds hundreds of compressed cubins: decompressing
  // them all to pass the one the device runs to the driver cost PyTorch's import 0.6 s
  // (docs/benchmarks.md "Transparent mode").
  bool defer_decompression = false;
};

struct FatBinary {
  std::vector<Entry> entries;  // in file order
  std::size_t containers = 0;
};

// `bytes` is either containers back to back (each starting with 0xBA55ED50; an .nv_fatbin section or
// an `nvcc -fatbin` file), or a wrapper (0x466243B1), which is followed to the container it points at.
common::Result<FatBinary> read_fatbin(std::span<const std::byte> bytes, const ReadLimits& limits = {});

// Decompresses an entry read with defer_decompression (nothing to do for any other entry), with the
// same checks and cap as read_fatbin.
common::Result<void> decompress_entry(Entry& entry, const ReadLimits& limits = {});

// The container a wrapper points at, sized by the container's own header. The wrapper's pointer is
// trusted the way the driver trusts it (it is an address in this process); it must be non-null and
// 8-byte aligned, and the container header it points at must carry the container magic. Only the
// 16 header bytes are read here. A v2 wrapper's prelinked array is not followed: it holds relocatable
// images for the runtime's device linker, not images the driver loads from this wrapper.
common::Result<std::span<const std::byte>> container_behind_wrapper(std::span<const std::byte> wrapper);

}  // namespace jitcache::client::fatbin
