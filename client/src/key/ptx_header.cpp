#include <client/src/key/ptx_header.hpp>

#include <cctype>

namespace jitcache::client::key {

namespace {

// Rationale: `.version` and `.target` precede the first declaration; 64 KiB of header is far more
// than any compiler emits before them, and bounds the scan on a multi-megabyte module.
constexpr std::size_t k_header_scan_limit = 64 << 10;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<unsigned> parse_unsigned(std::string_view s) {
  if (s.empty() || s.size() > 4) return std::nullopt;
  unsigned value = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  return value;
}

}  // namespace

std::optional<fatbin::Arch> parse_sm_arch(std::string_view word) {
  if (!word.starts_with("sm_")) return std::nullopt;
  word.remove_prefix(3);
  fatbin::Arch arch;
  if (word.ends_with('a')) {
    arch.variant = fatbin::ArchVariant::arch_specific;
    word.remove_suffix(1);
  } else if (word.ends_with('f')) {
    arch.variant = fatbin::ArchVariant::family;
    word.remove_suffix(1);
  }
  auto sm = parse_unsigned(word);
  if (!sm || *sm < 10) return std::nullopt;
  arch.sm = *sm;
  return arch;
}

PtxHeader read_ptx_header(std::string_view ptx) {
  PtxHeader header;
  ptx = ptx.substr(0, k_header_scan_limit);
  bool in_block_comment = false;
  while (!ptx.empty() && !(header.version_major && header.target)) {
    std::size_t end = ptx.find('\n');
    std::string_view line = ptx.substr(0, end);
    ptx = end == std::string_view::npos ? std::string_view() : ptx.substr(end + 1);

    if (in_block_comment) {
      auto close = line.find("*/");
      if (close == std::string_view::npos) continue;
      line.remove_prefix(close + 2);
      in_block_comment = false;
    }
    if (auto open = line.find("/*"); open != std::string_view::npos) {
      in_block_comment = line.find("*/", open) == std::string_view::npos;
      line = line.substr(0, open);
    }
    line = trim(line.substr(0, line.find("//")));

    if (line.starts_with(".version")) {
      std::string_view value = trim(line.substr(8));
      auto dot = value.find('.');
      if (dot != std::string_view::npos) {
        header.version_major = parse_unsigned(value.substr(0, dot));
        header.version_minor = parse_unsigned(trim(value.substr(dot + 1)));
      }
    } else if (line.starts_with(".target")) {
      std::string_view rest = trim(line.substr(7));
      // ".target sm_90a, texmode_independent": the first word is the SM.
      std::string_view first = trim(rest.substr(0, rest.find(',')));
      header.target = parse_sm_arch(first);
    }
  }
  return header;
}

}  // namespace jitcache::client::key
