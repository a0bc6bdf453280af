// Turns a hex key-id prefix (as `jitcache ls` prints key ids) into a half-open range [lo, hi) of
// key_id BLOB values, so prefix lookups, LIST and REMOVE are index range scans on entries_by_key
// instead of a LIKE over hex text.
//
// SQLite orders BLOBs with memcmp and then by length (a proper prefix sorts first), the same as
// std::lexicographical_compare. A prefix with an odd number of digits ends in half a byte: "abc"
// covers key ids from ab c0 … up to, but excluding, ab d0.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <common/result.hpp>

namespace jitcache::daemon::store {

inline constexpr std::size_t k_key_id_size = 32;
inline constexpr std::size_t k_max_key_id_prefix_digits = 2 * k_key_id_size;

struct KeyIdRange {
  std::vector<std::uint8_t> lo;  // inclusive
  std::vector<std::uint8_t> hi;  // exclusive; above every 32-byte key id when the prefix is all f
};

// `prefix`: min_digits..64 hex digits, either case; "" (when min_digits is 0) covers every key id.
// Anything else is ErrorCode::invalid_argument.
common::Result<KeyIdRange> key_id_range(std::string_view prefix, std::size_t min_digits);

}  // namespace jitcache::daemon::store
