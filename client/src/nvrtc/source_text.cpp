#include <client/src/nvrtc/source_text.hpp>

#include <algorithm>
#include <cctype>

namespace jitcache::client::nvrtc {

namespace {

// The index after the string or character literal that opens at `at`, or its line's end when it
// is not closed there. A raw string literal (R"d( ... )d", u8R"(...)" and the like) ends at its own
// delimiter, across lines.
std::size_t literal_end(std::string_view text, std::size_t at) {
  const char quote = text[at];
  if (quote == '"' && at > 0 && text[at - 1] == 'R') {
    const std::size_t open = text.find('(', at + 1);
    if (open != std::string_view::npos && open - at - 1 <= 16) {
      std::string close = ")";
      close.append(text.substr(at + 1, open - at - 1));
      close.push_back('"');
      const std::size_t end = text.find(close, open + 1);
      if (end != std::string_view::npos) return end + close.size();
    }
  }
  for (std::size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == quote) {
      return i + 1;
    } else if (text[i] == '\n') {
      return i;
    }
  }
  return text.size();
}

}  // namespace

// Copied in runs between backslashes: one character at a time was a fifth of a first scan's time.
std::string spliced(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t from = 0;
  for (std::size_t at = text.find('\\'); at != std::string_view::npos; at = text.find('\\', at + 1)) {
    std::size_t length = 0;
    if (at + 1 < text.size() && text[at + 1] == '\n') length = 2;
    if (at + 2 < text.size() && text[at + 1] == '\r' && text[at + 2] == '\n') length = 3;
    if (length == 0) continue;
    out.append(text.substr(from, at - from));
    from = at + length;
    at = from - 1;
  }
  out.append(text.substr(from));
  return out;
}

// Copied in runs between the characters that may open a literal or a comment, each found with
// memchr: a loop over the characters (or string_view::find_first_of, which calls memchr once per
// character) took most of a first scan's time.
std::string decommented(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  // The next '"', '\'' and '/' at or after the last place looked; found again only once passed.
  std::size_t next_of[3] = {0, 0, 0};
  bool known[3] = {false, false, false};
  const char openers[3] = {'"', '\'', '/'};
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t next = text.size();
    for (int k = 0; k < 3; ++k) {
      if (!known[k] || next_of[k] < i) {
        next_of[k] = std::min(text.find(openers[k], i), text.size());
        known[k] = true;
      }
      next = std::min(next, next_of[k]);
    }
    out.append(text.substr(i, next - i));
    i = next;
    if (i >= text.size()) break;
    const char c = text[i];
    if (c == '\'' && i > 0 && std::isxdigit(static_cast<unsigned char>(text[i - 1])) != 0) {
      out.push_back(c);  // a digit separator, 1'000 or 0xff'ff
      ++i;
    } else if (c == '"' || c == '\'') {
      const std::size_t end = literal_end(text, i);
      out.append(text.substr(i, end - i));
      i = end;
    } else if (i + 1 < text.size() && text[i + 1] == '/') {
      out.push_back(' ');
      i = std::min(text.find('\n', i), text.size());
    } else if (i + 1 < text.size() && text[i + 1] == '*') {
      const std::size_t close = text.find("*/", i + 2);
      const std::size_t end = close == std::string_view::npos ? text.size() : close + 2;
      out.push_back(' ');
      out.append(static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(i),
                                                     text.begin() + static_cast<std::ptrdiff_t>(end), '\n')),
                 '\n');
      i = end;
    } else {
      out.push_back(c);  // a division
      ++i;
    }
  }
  return out;
}

}  // namespace jitcache::client::nvrtc
