#include <client/cli/terminal_text.hpp>

#include <cstdio>

#include <proto/printable_text.hpp>

namespace jitcache::client::cli {

std::string terminal_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const proto::Utf8Sequence sequence = proto::read_utf8(text, at);
    char escape[16];
    if (sequence.valid && proto::is_printable_code_point(sequence.code_point)) {
      if (text[at] == '\\') out += '\\';
      out.append(text, at, sequence.length);
    } else if (!sequence.valid || sequence.code_point < 0x80) {
      std::snprintf(escape, sizeof(escape), "\\x%02x", static_cast<unsigned char>(text[at]));
      out += escape;
    } else {
      std::snprintf(escape, sizeof(escape), "\\u{%04x}", static_cast<unsigned>(sequence.code_point));
      out += escape;
    }
    at += sequence.length;
  }
  return out;
}

}  // namespace jitcache::client::cli
