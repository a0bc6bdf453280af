// Parsing of the human units accepted in configuration: sizes ("64MiB", "1.5G", "4096") and
// durations ("500ms", "30s", "5m", "1h"). Thread safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <common/result.hpp>

namespace jitcache::daemon::config {

// Bytes. Suffixes: none/B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB, case-insensitive; K and KiB are
// 1024, KB is 1000 (as in IEC/SI). Fractions allowed ("1.5G").
common::Result<std::uint64_t> parse_size(std::string_view text);
// Milliseconds. Suffixes: ms, s, m, h, d; a bare number is seconds.
common::Result<std::chrono::milliseconds> parse_duration(std::string_view text);

std::string format_size(std::uint64_t bytes);
std::string format_duration(std::chrono::milliseconds d);

}  // namespace jitcache::daemon::config
