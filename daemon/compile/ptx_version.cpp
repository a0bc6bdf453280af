#include <daemon/compile/ptx_version.hpp>

#include <charconv>
#include <cstddef>

namespace jitcache::daemon::compile {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

// Index of the first character that is neither white space nor inside a comment.
std::size_t skip_space_and_comments(std::string_view text, std::size_t at) {
  while (at < text.size()) {
    if (is_space(text[at])) {
      ++at;
    } else if (text.substr(at, 2) == "//") {
      const std::size_t end = text.find('\n', at);
      at = end == std::string_view::npos ? text.size() : end + 1;
    } else if (text.substr(at, 2) == "/*") {
      const std::size_t end = text.find("*/", at + 2);
      at = end == std::string_view::npos ? text.size() : end + 2;
    } else {
      break;
    }
  }
  return at;
}

std::optional<unsigned> read_number(std::string_view text, std::size_t& at) {
  unsigned value = 0;
  const auto parsed = std::from_chars(text.data() + at, text.data() + text.size(), value);
  if (parsed.ec != std::errc()) return std::nullopt;
  at = static_cast<std::size_t>(parsed.ptr - text.data());
  return value;
}

}  // namespace

std::optional<PtxIsa> read_ptx_isa(std::string_view ptx) {
  constexpr std::string_view k_directive = ".version";
  std::size_t at = skip_space_and_comments(ptx, 0);
  if (ptx.substr(at, k_directive.size()) != k_directive) return std::nullopt;
  at += k_directive.size();
  if (at >= ptx.size() || !is_space(ptx[at])) return std::nullopt;
  while (at < ptx.size() && (ptx[at] == ' ' || ptx[at] == '\t')) ++at;
  const auto major = read_number(ptx, at);
  if (!major || at >= ptx.size() || ptx[at] != '.') return std::nullopt;
  ++at;
  const auto minor = read_number(ptx, at);
  if (!minor) return std::nullopt;
  // Rationale: "9.0x" or "9.0.1" is not an ISA version; better to let nvJitLink say so than to
  // judge the module by a prefix of its version.
  if (at < ptx.size() && !is_space(ptx[at]) && ptx[at] != '/') return std::nullopt;
  return PtxIsa{*major, *minor};
}

}  // namespace jitcache::daemon::compile
