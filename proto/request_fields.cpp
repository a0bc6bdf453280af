#include <proto/request_fields.hpp>

#include <cstdio>
#include <string>

#include <proto/printable_text.hpp>

namespace jitcache::proto {

namespace {

// What is wrong at `at`, without the text itself: the bytes came from an untrusted peer and the
// message may be logged or shown.
std::string describe_unprintable(std::string_view text, std::size_t at) {
  const Utf8Sequence sequence = read_utf8(text, at);
  char what[64];
  if (!sequence.valid) {
    std::snprintf(what, sizeof(what), "invalid UTF-8 (byte 0x%02x)", static_cast<unsigned char>(text[at]));
  } else if (sequence.code_point < 0x80) {
    std::snprintf(what, sizeof(what), "control character 0x%02x", static_cast<unsigned>(sequence.code_point));
  } else {
    const char* kind = sequence.code_point <= 0x9F ? "control character" : "bidirectional control";
    std::snprintf(what, sizeof(what), "%s U+%04X", kind, static_cast<unsigned>(sequence.code_point));
  }
  return std::string(what) + " at byte " + std::to_string(at);
}

}  // namespace

common::Result<void> check_printable_field(std::string_view field, std::string_view text) {
  const std::size_t at = first_unprintable(text);
  if (at == std::string_view::npos) return {};
  return common::make_error(common::ErrorCode::invalid_argument,
                            std::string(field) + " is not printable text: " + describe_unprintable(text, at) +
                                " (control characters, bidirectional controls and invalid UTF-8 are refused)");
}

common::Result<void> check_compile_time_us(std::uint64_t value) {
  if (value <= k_max_compile_time_us) return {};
  return common::make_error(common::ErrorCode::invalid_argument,
                            "compile_time_us " + std::to_string(value) + " is above the maximum " +
                                std::to_string(k_max_compile_time_us) + " (2^63 - 1)");
}

}  // namespace jitcache::proto
