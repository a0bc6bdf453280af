#include <common/toml_non_ascii.hpp>

namespace jitcache::common {

namespace {

constexpr std::string_view k_byte_order_mark = "\xEF\xBB\xBF";

bool is_non_ascii(char c) { return static_cast<unsigned char>(c) >= 0x80; }

// The offset just past a single-line string's closing quote (or its line's end when unterminated).
std::size_t skip_single_line_string(std::string_view text, std::size_t open) {
  const char quote = text[open];
  for (std::size_t i = open + 1; i < text.size(); ++i) {
    if (text[i] == '\n') return i;
    if (quote == '"' && text[i] == '\\') {
      ++i;  // an escaped character never closes the string
    } else if (text[i] == quote) {
      return i + 1;
    }
  }
  return text.size();
}

}  // namespace

std::optional<std::size_t> find_misplaced_non_ascii(std::string_view text) {
  std::size_t i = text.starts_with(k_byte_order_mark) ? k_byte_order_mark.size() : 0;
  // After '=' and blanks: the next token is the key's value, and a string there may hold anything.
  bool expect_value = false;
  // Inside bare text (a number, a date, a word) until what ends a value: a blank, a line's end, a
  // comma or a closing bracket or brace. toml++ reads a bare
  // value up to its terminator whatever it holds, so an '=' or a quote there starts nothing: in
  // `a = -2='\xD0\x81'` the quoted text is part of the bare value (fuzz_config's second finding).
  bool in_bare_text = false;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      expect_value = false;
      in_bare_text = false;
      continue;
    }
    if ((c == '"' || c == '\'') && !in_bare_text) {
      const std::string_view triple = c == '"' ? "\"\"\"" : "'''";
      const bool value = expect_value;
      expect_value = false;
      if (text.substr(i).starts_with(triple)) {
        // A multi-line string: refused non-ASCII inside (toml++ tests it for whitespace after a
        // line-ending backslash), so only its end matters. Quotes are ASCII, so stepping byte by
        // byte and stopping at the first non-ASCII one is enough.
        i += triple.size();
        while (i < text.size() && !text.substr(i).starts_with(triple)) {
          if (is_non_ascii(text[i])) return i;
          i += (c == '"' && text[i] == '\\') ? 2 : 1;
        }
        i += triple.size();
        continue;
      }
      const std::size_t end = skip_single_line_string(text, i);
      if (!value) {
        for (std::size_t j = i; j < end && j < text.size(); ++j) {
          if (is_non_ascii(text[j])) return j;
        }
      }
      i = end;
      continue;
    }
    if (is_non_ascii(c)) return i;
    const bool blank = c == ' ' || c == '\t';
    if (blank || c == '\n' || c == '\r' || c == ',' || c == ']' || c == '}') {
      in_bare_text = false;
    } else if (c == '=' && !in_bare_text) {
      expect_value = true;
      ++i;
      continue;
    } else if (expect_value) {
      in_bare_text = c != '[' && c != '{';
    }
    if (!blank) expect_value = false;
    ++i;
  }
  return std::nullopt;
}

}  // namespace jitcache::common
