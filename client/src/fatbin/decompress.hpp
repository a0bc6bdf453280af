// Decompression of fat binary entries (Zstd frames and raw LZ4 blocks) into an owned buffer.
//
// The entry header states the uncompressed size; the output must be exactly that size, and that size
// must stay under a cap, so a lying header or a decompression bomb is an Error, never a huge
// allocation or an out-of-bounds write.
// Thread safety: pure functions (each call uses its own decoder state).
#pragma once

#include <client/src/fatbin/fatbin_entry.hpp>
#include <common/result.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace jitcache::client::fatbin {

// `where` names the entry in error messages ("entry at offset 16").
common::Result<std::vector<std::byte>> decompress(Compression compression, std::span<const std::byte> input,
                                                  std::uint64_t expected_size, std::uint64_t max_size,
                                                  const std::string& where);

}  // namespace jitcache::client::fatbin
