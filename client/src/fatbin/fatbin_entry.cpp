#include <client/src/fatbin/fatbin_entry.hpp>

#include <algorithm>

namespace jitcache::client::fatbin {

std::string_view Entry::ptx_text() const {
  const auto* chars = reinterpret_cast<const char*>(bytes.data());
  const auto* end = std::find(chars, chars + bytes.size(), '\0');
  return std::string_view(chars, static_cast<std::size_t>(end - chars));
}

std::string arch_name(const Arch& arch, std::string_view prefix) {
  std::string name(prefix);
  name += '_';
  name += std::to_string(arch.sm);
  if (arch.variant == ArchVariant::arch_specific) name += 'a';
  if (arch.variant == ArchVariant::family) name += 'f';
  return name;
}

std::string_view kind_name(EntryKind kind) {
  switch (kind) {
    case EntryKind::ptx: return "PTX";
    case EntryKind::cubin: return "cubin";
    case EntryKind::lto_ir: return "LTO-IR";
    case EntryKind::other: return "unknown";
  }
  return "unknown";
}

std::string_view compression_name(Compression compression) {
  switch (compression) {
    case Compression::none: return "none";
    case Compression::zstd: return "zstd";
    case Compression::lz4: return "lz4";
  }
  return "none";
}

std::string describe(const Entry& entry) {
  std::string text = arch_name(entry.arch, entry.kind == EntryKind::ptx ? "compute" : "sm");
  text += ' ';
  text += kind_name(entry.kind);
  if (entry.kind == EntryKind::other) text += " (kind " + std::to_string(entry.raw_kind) + ")";
  if (entry.kind == EntryKind::ptx) {
    text += ' ' + std::to_string(entry.version_major) + '.' + std::to_string(entry.version_minor);
  }
  if (entry.compression != Compression::none) {
    text += " (";
    text += compression_name(entry.compression);
    text += ')';
  }
  return text;
}

}  // namespace jitcache::client::fatbin
