// The rules for the request fields that the key does not cover and that a daemon stores, logs or
// shows to others (PROTOCOL.md §4 "Field rules"): free text must be printable (printable_text.hpp)
// and compile_time_us must fit the store's signed 64-bit column. The request decoders
// (messages.cpp) apply them, so a violation is `bad_request` naming the field, before the request
// reaches the store. Errors never echo the refused bytes. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include <common/result.hpp>

namespace jitcache::proto {

// Rationale: the store keeps compile_time_us in an SQLite INTEGER, which is signed 64-bit; 2^63 - 1
// microseconds is some 292 000 years, so nothing real is refused.
inline constexpr std::uint64_t k_max_compile_time_us = std::numeric_limits<std::int64_t>::max();

// invalid_argument "<field> is not printable text: ... at byte <offset>" when `text` is not.
common::Result<void> check_printable_field(std::string_view field, std::string_view text);

// invalid_argument when `value` is above k_max_compile_time_us.
common::Result<void> check_compile_time_us(std::uint64_t value);

}  // namespace jitcache::proto
