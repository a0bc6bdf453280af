// Unaligned little-endian loads from a byte span, for the fat binary and ELF readers.
//
// The caller checks bounds first (every reader checks a field's extent against its buffer before
// loading it); the loads assert in debug builds as a second line. memcpy keeps them free of
// alignment and aliasing assumptions: a fat binary handed to us may sit at any address.
// Thread safety: pure functions.
#pragma once

#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace jitcache::client::fatbin {

template <class T>
T load_le(std::span<const std::byte> bytes, std::size_t offset) {
  assert(offset <= bytes.size() && sizeof(T) <= bytes.size() - offset);
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  static_assert(std::endian::native == std::endian::little, "jitcache reads fat binaries on little-endian hosts only");
  return value;
}

// True when [offset, offset + length) lies inside a buffer of `size` bytes, without overflow.
inline bool fits(std::uint64_t offset, std::uint64_t length, std::uint64_t size) {
  return offset <= size && length <= size - offset;
}

}  // namespace jitcache::client::fatbin
