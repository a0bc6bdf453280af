// What counts as printable text in the protocol's free-text fields (PROTOCOL.md §4 "Printable
// text"): valid UTF-8 with no control characters (U+0000..U+001F, U+007F..U+009F) and no
// bidirectional formatting characters (Unicode's Bidi_Control property: U+061C, U+200E, U+200F,
// U+202A..U+202E, U+2066..U+2069).
// Rationale: these fields reach terminals (`jitcache ls` run by root), logs and JSON. A control
// character starts an escape sequence that can rewrite the screen or the terminal's title, C1 codes
// (U+0080..U+009F) do the same on terminals that honour 8-bit controls, and bidirectional controls
// make text read differently from its bytes. Everything else, accents included, is text.
// The daemon refuses a request whose field is not printable (request_fields.hpp); the CLI escapes
// whatever it prints (client/cli/terminal_text.hpp), both with the classification below.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

namespace jitcache::proto {

// One UTF-8 sequence read at a position: a code point and how many bytes it took, or, when the
// bytes there are not valid UTF-8 (a stray continuation byte, a truncated or overlong sequence, a
// surrogate, a value above U+10FFFF), valid == false and length 1 (the first byte alone).
struct Utf8Sequence {
  char32_t code_point = 0;
  std::size_t length = 1;
  bool valid = false;
};

// `at` must be below text.size().
Utf8Sequence read_utf8(std::string_view text, std::size_t at);

// A valid code point that is neither a control character nor a bidirectional control.
bool is_printable_code_point(char32_t code_point);

// The byte offset of the first sequence that is invalid or not printable; npos: all printable.
std::size_t first_unprintable(std::string_view text);

}  // namespace jitcache::proto
