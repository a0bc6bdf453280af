#include <daemon/config/units.hpp>

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace jitcache::daemon::config {

using common::ErrorCode;
using common::make_error;

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits "1.5GiB" into 1.5 and "gib".
bool split_number(std::string_view text, double& number, std::string& suffix) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  std::size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  if (end == 0) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, number);
  if (ec != std::errc() || ptr != text.data() + end || !std::isfinite(number) || number < 0) return false;
  std::string_view rest = text.substr(end);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  suffix = lower(rest);
  return true;
}

}  // namespace

common::Result<std::uint64_t> parse_size(std::string_view text) {
  double number = 0;
  std::string suffix;
  if (!split_number(text, number, suffix)) {
    return make_error(ErrorCode::invalid_argument, "\"" + std::string(text) + "\" is not a size (e.g. 64MiB)");
  }
  double scale = 0;
  if (suffix.empty() || suffix == "b") scale = 1;
  else if (suffix == "k" || suffix == "kib") scale = 1024.0;
  else if (suffix == "kb") scale = 1e3;
  else if (suffix == "m" || suffix == "mib") scale = 1024.0 * 1024;
  else if (suffix == "mb") scale = 1e6;
  else if (suffix == "g" || suffix == "gib") scale = 1024.0 * 1024 * 1024;
  else if (suffix == "gb") scale = 1e9;
  else if (suffix == "t" || suffix == "tib") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (suffix == "tb") scale = 1e12;
  else {
    return make_error(ErrorCode::invalid_argument,
                      "\"" + std::string(text) + "\" has an unknown size unit \"" + suffix + "\"");
  }
  double bytes = number * scale;
  if (bytes > 9.0e18) return make_error(ErrorCode::invalid_argument, "\"" + std::string(text) + "\" is too large");
  return static_cast<std::uint64_t>(std::llround(bytes));
}

common::Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  double number = 0;
  std::string suffix;
  if (!split_number(text, number, suffix)) {
    return make_error(ErrorCode::invalid_argument, "\"" + std::string(text) + "\" is not a duration (e.g. 30s)");
  }
  double ms_per_unit = 0;
  if (suffix == "ms") ms_per_unit = 1;
  else if (suffix.empty() || suffix == "s") ms_per_unit = 1000;
  else if (suffix == "m" || suffix == "min") ms_per_unit = 60'000;
  else if (suffix == "h") ms_per_unit = 3'600'000;
  else if (suffix == "d") ms_per_unit = 86'400'000;
  else {
    return make_error(ErrorCode::invalid_argument,
                      "\"" + std::string(text) + "\" has an unknown duration unit \"" + suffix + "\"");
  }
  double ms = number * ms_per_unit;
  if (ms > 1e15) return make_error(ErrorCode::invalid_argument, "\"" + std::string(text) + "\" is too long");
  return std::chrono::milliseconds(std::llround(ms));
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* k_units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes % 1024 == 0 && bytes >= 1024) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + k_units[unit];
}

std::string format_duration(std::chrono::milliseconds d) {
  auto ms = d.count();
  if (ms % 86'400'000 == 0 && ms != 0) return std::to_string(ms / 86'400'000) + "d";
  if (ms % 3'600'000 == 0 && ms != 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms % 60'000 == 0 && ms != 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace jitcache::daemon::config
