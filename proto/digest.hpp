// Digests used by the key and the store.
//
// Digest256 is SHA-256 (OpenSSL): it decides which image a key names, and a shared image is code
// run by other tenants, so it must resist deliberate collisions (docs/cache-key.md "Why SHA-256 for
// content, XXH3-128 only for checksums"). Checksum128 is XXH3-128: it only detects damage to stored
// or transmitted bytes, where an adversary gains nothing, and it runs at memory speed.
// Thread safety: free functions, no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace jitcache::proto {

using Bytes = std::span<const std::uint8_t>;

struct Digest256 {
  std::array<std::uint8_t, 32> bytes{};
  auto operator<=>(const Digest256&) const = default;
};

struct Checksum128 {
  std::array<std::uint8_t, 16> bytes{};  // XXH128 canonical (big-endian) form
  auto operator<=>(const Checksum128&) const = default;
};

Digest256 sha256(Bytes data);
Checksum128 xxh3_128(Bytes data);

std::string to_hex(Bytes data);
inline std::string to_hex(const Digest256& d) { return to_hex(Bytes(d.bytes)); }
inline std::string to_hex(const Checksum128& c) { return to_hex(Bytes(c.bytes)); }

// Parses exactly 64 lowercase or uppercase hex digits.
std::optional<Digest256> digest_from_hex(std::string_view hex);

inline Bytes as_bytes(std::string_view s) { return Bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()); }

}  // namespace jitcache::proto
