#include <client/cli/format.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>

namespace jitcache::client::cli {

std::string human_bytes(std::uint64_t bytes) {
  static constexpr const char* k_units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(k_units)) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, k_units[unit]);
  return text;
}

std::string human_age(std::int64_t then_ms, std::int64_t now_ms) {
  if (then_ms == 0) return "never";
  if (then_ms > now_ms) return "just now";
  const std::int64_t seconds = (now_ms - then_ms) / 1000;
  if (seconds < 60) return std::to_string(seconds) + "s ago";
  if (seconds < 3600) return std::to_string(seconds / 60) + "m ago";
  if (seconds < 86400) return std::to_string(seconds / 3600) + "h ago";
  return std::to_string(seconds / 86400) + "d ago";
}

std::string iso8601_utc(std::int64_t unix_ms) {
  // Floor division, so times before 1970 still get a millisecond part in 0..999.
  std::int64_t seconds = unix_ms / 1000;
  std::int64_t millis = unix_ms % 1000;
  if (millis < 0) {
    millis += 1000;
    --seconds;
  }
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm utc{};
  if (::gmtime_r(&t, &utc) == nullptr) return std::to_string(unix_ms) + "ms";
  char text[48];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(millis));
  return text;
}

std::int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string namespace_name(std::uint32_t namespace_id) {
  return namespace_id == 0 ? std::string("shared") : "uid " + std::to_string(namespace_id);
}

std::string human_duration_us(std::uint64_t microseconds) {
  char text[32];
  if (microseconds < 1'000'000) {
    std::snprintf(text, sizeof(text), "%.3f ms", static_cast<double>(microseconds) / 1000.0);
  } else {
    std::snprintf(text, sizeof(text), "%.3f s", static_cast<double>(microseconds) / 1'000'000.0);
  }
  return text;
}

}  // namespace jitcache::client::cli
