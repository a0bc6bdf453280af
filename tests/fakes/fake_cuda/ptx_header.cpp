#include <tests/fakes/fake_cuda/ptx_header.hpp>

#include <cctype>
#include <charconv>

namespace jitcache::fakes::fake_cuda {
namespace {

class Scanner {
 public:
  explicit Scanner(std::string_view text) : m_text(text) {}

  // The next whitespace/comma-separated token outside comments; empty at the end.
  std::string_view next() {
    skip_space_and_comments();
    const std::size_t start = m_at;
    while (m_at < m_text.size() && !is_separator(m_text[m_at]) && !starts_comment()) ++m_at;
    return m_text.substr(start, m_at - start);
  }

  // True when the next token sits on the same line (directive arguments do).
  bool more_on_line() {
    while (m_at < m_text.size() && (m_text[m_at] == ' ' || m_text[m_at] == '\t' || m_text[m_at] == ',')) ++m_at;
    return m_at < m_text.size() && m_text[m_at] != '\n' && m_text[m_at] != '\r' && !starts_comment();
  }

  unsigned line() const {
    unsigned line = 1;
    for (std::size_t i = 0; i < m_at && i < m_text.size(); ++i) line += m_text[i] == '\n' ? 1 : 0;
    return line;
  }

 private:
  static bool is_separator(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0 || c == ','; }

  bool starts_comment() const {
    return m_at + 1 < m_text.size() && m_text[m_at] == '/' && (m_text[m_at + 1] == '/' || m_text[m_at + 1] == '*');
  }

  void skip_space_and_comments() {
    while (m_at < m_text.size()) {
      if (is_separator(m_text[m_at])) {
        ++m_at;
      } else if (starts_comment() && m_text[m_at + 1] == '/') {
        const auto end = m_text.find('\n', m_at);
        m_at = end == std::string_view::npos ? m_text.size() : end;
      } else if (starts_comment()) {
        const auto end = m_text.find("*/", m_at + 2);
        m_at = end == std::string_view::npos ? m_text.size() : end + 2;
      } else {
        return;
      }
    }
  }

  std::string_view m_text;
  std::size_t m_at = 0;
};

std::optional<unsigned> number(std::string_view text) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "sm_90" / "sm_90a" / "sm_100f"; nullopt for anything else ("texmode_independent", "debug").
std::optional<fb::Arch> target_arch(std::string_view token) {
  if (!token.starts_with("sm_")) return std::nullopt;
  token.remove_prefix(3);
  fb::Arch arch;
  if (!token.empty() && (token.back() == 'a' || token.back() == 'f')) {
    arch.variant = token.back() == 'a' ? fb::ArchVariant::arch_specific : fb::ArchVariant::family;
    token.remove_suffix(1);
  }
  const auto sm = number(token);
  if (!sm) return std::nullopt;
  arch.sm = *sm;
  return arch;
}

}  // namespace

std::optional<PtxHeader> read_ptx_header(std::string_view text) {
  Scanner scanner(text);
  if (scanner.next() != ".version") return std::nullopt;
  PtxHeader header;
  header.version_line = scanner.line();
  const std::string_view version = scanner.next();
  const auto dot = version.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto major = number(version.substr(0, dot));
  const auto minor = number(version.substr(dot + 1));
  if (!major || !minor) return std::nullopt;
  header.version_major = *major;
  header.version_minor = *minor;
  if (scanner.next() == ".target") {
    while (scanner.more_on_line()) {
      if (auto arch = target_arch(scanner.next()); arch && !header.target) header.target = arch;
    }
  }
  return header;
}

}  // namespace jitcache::fakes::fake_cuda
