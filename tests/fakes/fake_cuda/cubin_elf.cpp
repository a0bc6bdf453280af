#include <tests/fakes/fake_cuda/cubin_elf.hpp>

#include <client/src/fatbin/elf_extent.hpp>

#include <elf.h>

#include <algorithm>
#include <common/result.hpp>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace jitcache::fakes::fake_cuda {
namespace {

using Bytes = std::span<const std::byte>;
using common::ErrorCode;

// Rationale: an ELF may not use more section indices than this without extended numbering, which no
// cubin uses; more than that is a lying header.
constexpr std::uint64_t k_max_sections = SHN_LORESERVE;
// .nv.compat attribute 9 holds 1 for an arch-specific (sm_XYa) cubin [E-local, CUDA 13.0].
constexpr std::uint8_t k_compat_arch_specific_attribute = 9;
// st_other bit the CUDA toolchain sets on kernel (entry) symbols [E-local readelf: "<other>: 10"].
constexpr unsigned char k_sto_cuda_entry = 0x10;

common::Error corrupt(const std::string& message) {
  return common::make_error(ErrorCode::corrupt, "cubin: " + message);
}

template <class T>
T read_at(Bytes bytes, std::uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

bool fits(std::uint64_t offset, std::uint64_t length, std::uint64_t size) {
  return offset <= size && length <= size - offset;
}

common::Result<Elf64_Ehdr> read_header(Bytes image) {
  if (image.size() < sizeof(Elf64_Ehdr)) return corrupt("shorter than an ELF header");
  const auto header = read_at<Elf64_Ehdr>(image, 0);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return corrupt("no ELF magic");
  if (header.e_ident[EI_CLASS] != ELFCLASS64) return corrupt("not ELFCLASS64");
  if (header.e_ident[EI_DATA] != ELFDATA2LSB) return corrupt("not little-endian");
  if (header.e_machine != k_em_cuda)
    return corrupt("e_machine " + std::to_string(header.e_machine) + " is not EM_CUDA (190)");
  if (header.e_type != ET_EXEC && header.e_type != ET_REL)
    return corrupt("e_type " + std::to_string(header.e_type) + " is neither ET_EXEC nor ET_REL");
  if (header.e_ehsize != sizeof(Elf64_Ehdr)) return corrupt("e_ehsize is not 64");
  if (header.e_shnum == 0 || header.e_shnum >= k_max_sections)
    return corrupt("e_shnum " + std::to_string(header.e_shnum) + " out of range");
  if (header.e_shentsize != sizeof(Elf64_Shdr)) return corrupt("e_shentsize is not 64");
  if (header.e_phnum != 0 && header.e_phentsize != sizeof(Elf64_Phdr)) return corrupt("e_phentsize is not 56");
  if (header.e_shstrndx >= header.e_shnum) return corrupt("e_shstrndx past the section table");
  if (header.e_shoff < sizeof(Elf64_Ehdr) || header.e_shoff > fb::k_max_elf_size)
    return corrupt("e_shoff out of range");
  if (header.e_phnum != 0 && (header.e_phoff < sizeof(Elf64_Ehdr) || header.e_phoff > fb::k_max_elf_size)) {
    return corrupt("e_phoff out of range");
  }
  return header;
}

std::uint64_t tables_end(const Elf64_Ehdr& header) {
  std::uint64_t end = header.e_shoff + std::uint64_t{header.e_shnum} * sizeof(Elf64_Shdr);
  if (header.e_phnum != 0) end = std::max(end, header.e_phoff + std::uint64_t{header.e_phnum} * sizeof(Elf64_Phdr));
  return end;
}

Elf64_Shdr section(Bytes image, const Elf64_Ehdr& header, std::size_t index) {
  return read_at<Elf64_Shdr>(image, header.e_shoff + index * sizeof(Elf64_Shdr));
}

// The string at `offset` of a string table, which must end inside the table.
std::optional<std::string_view> string_at(Bytes table, std::uint64_t offset) {
  if (offset >= table.size()) return std::nullopt;
  const auto* start = reinterpret_cast<const char*>(table.data() + offset);
  const void* nul = std::memchr(start, '\0', table.size() - offset);
  if (nul == nullptr) return std::nullopt;
  return std::string_view(start, static_cast<const char*>(nul) - start);
}

Bytes contents(Bytes image, const Elf64_Shdr& shdr) { return image.subspan(shdr.sh_offset, shdr.sh_size); }

bool compat_says_arch_specific(Bytes compat) {
  // Records as in .nv.info: u8 format, u8 attribute, then by format: 1 nothing, 2 a byte (+1 pad),
  // 3 a u16, 4 a u16 length and that many bytes.
  std::size_t i = 0;
  while (i + 2 <= compat.size()) {
    const auto format = static_cast<std::uint8_t>(compat[i]);
    const auto attribute = static_cast<std::uint8_t>(compat[i + 1]);
    if (format == 1) {
      i += 2;
    } else if (format == 2 || format == 3) {
      if (i + 4 > compat.size()) break;
      if (format == 2 && attribute == k_compat_arch_specific_attribute) return compat[i + 2] == std::byte{1};
      i += 4;
    } else if (format == 4) {
      if (i + 4 > compat.size()) break;
      const auto length = read_at<std::uint16_t>(compat, i + 2);
      i += 4 + std::size_t{length};
    } else {
      break;
    }
  }
  return false;
}

// The suffix after "-arch sm_NN" in the tkinfo note: 'a', 'f' or nothing.
std::optional<char> tkinfo_arch_suffix(Bytes note) {
  const std::string_view text(reinterpret_cast<const char*>(note.data()), note.size());
  constexpr std::string_view k_marker = "-arch sm_";
  const auto at = text.rfind(k_marker);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + k_marker.size();
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  return i < text.size() ? text[i] : '\0';
}

}  // namespace

common::Result<std::size_t> elf_tables_end(Bytes header_bytes) {
  auto header = read_header(header_bytes);
  JITCACHE_TRY(header);
  const std::uint64_t end = tables_end(*header);
  if (end > fb::k_max_elf_size) return corrupt("its header tables end past 1 GiB");
  return static_cast<std::size_t>(end);
}

common::Result<std::size_t> elf_image_end(Bytes image) {
  auto header = read_header(image);
  JITCACHE_TRY(header);
  std::uint64_t end = tables_end(*header);
  if (end > image.size()) return corrupt("its header tables run past the bytes given");
  for (std::size_t i = 0; i < header->e_shnum; ++i) {
    const auto shdr = section(image, *header, i);
    if (shdr.sh_type == SHT_NOBITS) continue;
    if (shdr.sh_offset > fb::k_max_elf_size || shdr.sh_size > fb::k_max_elf_size) {
      return corrupt("section " + std::to_string(i) + " lies past 1 GiB");
    }
    end = std::max(end, shdr.sh_offset + shdr.sh_size);
  }
  for (std::size_t i = 0; i < header->e_phnum; ++i) {
    const auto phdr = read_at<Elf64_Phdr>(image, header->e_phoff + i * sizeof(Elf64_Phdr));
    if (phdr.p_offset > fb::k_max_elf_size || phdr.p_filesz > fb::k_max_elf_size) {
      return corrupt("segment " + std::to_string(i) + " lies past 1 GiB");
    }
    end = std::max(end, phdr.p_offset + phdr.p_filesz);
  }
  if (end > fb::k_max_elf_size) return corrupt("it claims more than 1 GiB");
  return static_cast<std::size_t>(end);
}

common::Result<CubinInfo> inspect_cubin(Bytes image) {
  auto header = read_header(image);
  JITCACHE_TRY(header);
  if (tables_end(*header) > image.size()) return corrupt("truncated: its header tables run past the image");
  for (std::size_t i = 0; i < header->e_phnum; ++i) {
    const auto phdr = read_at<Elf64_Phdr>(image, header->e_phoff + i * sizeof(Elf64_Phdr));
    if (!fits(phdr.p_offset, phdr.p_filesz, image.size()))
      return corrupt("truncated: segment " + std::to_string(i) + " runs past the image");
  }
  for (std::size_t i = 0; i < header->e_shnum; ++i) {
    const auto shdr = section(image, *header, i);
    if (shdr.sh_type != SHT_NOBITS && !fits(shdr.sh_offset, shdr.sh_size, image.size())) {
      return corrupt("truncated: section " + std::to_string(i) + " runs past the image");
    }
  }
  const auto shstrtab_header = section(image, *header, header->e_shstrndx);
  if (shstrtab_header.sh_type != SHT_STRTAB) return corrupt("e_shstrndx does not name a string table");
  const Bytes shstrtab = contents(image, shstrtab_header);

  CubinInfo info;
  info.relocatable = header->e_type == ET_REL;
  const unsigned abi_version = header->e_ident[EI_ABIVERSION];
  info.arch.sm = abi_version >= 8 ? (header->e_flags >> 8) & 0xFFu : header->e_flags & 0xFFu;
  if (info.arch.sm < 30) return corrupt("e_flags names no SM");

  bool compat_a = false;
  std::optional<char> tkinfo_suffix;
  bool have_symtab = false;
  std::vector<std::string> text_sections;
  for (std::size_t i = 0; i < header->e_shnum; ++i) {
    const auto shdr = section(image, *header, i);
    const auto name = string_at(shstrtab, shdr.sh_name);
    if (!name) return corrupt("section " + std::to_string(i) + " has a name outside .shstrtab");
    if (*name == ".nv.compat") compat_a = compat_says_arch_specific(contents(image, shdr));
    if (*name == ".note.nv.tkinfo") tkinfo_suffix = tkinfo_arch_suffix(contents(image, shdr));
    if (name->starts_with(".text.")) text_sections.emplace_back(name->substr(6));
    if (shdr.sh_type != SHT_SYMTAB) continue;
    have_symtab = true;
    if (shdr.sh_entsize != sizeof(Elf64_Sym) || shdr.sh_size % sizeof(Elf64_Sym) != 0)
      return corrupt("a symbol table has a bad entry size");
    if (shdr.sh_link >= header->e_shnum) return corrupt("a symbol table links past the section table");
    const auto strtab_header = section(image, *header, shdr.sh_link);
    if (strtab_header.sh_type != SHT_STRTAB) return corrupt("a symbol table does not link to a string table");
    const Bytes symbols = contents(image, shdr);
    const Bytes strtab = contents(image, strtab_header);
    for (std::size_t s = 0; s < symbols.size() / sizeof(Elf64_Sym); ++s) {
      const auto symbol = read_at<Elf64_Sym>(symbols, s * sizeof(Elf64_Sym));
      const auto symbol_name = string_at(strtab, symbol.st_name);
      if (!symbol_name) return corrupt("symbol " + std::to_string(s) + " has a name outside its string table");
      if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC) continue;
      if (symbol.st_shndx == SHN_UNDEF) {
        info.unresolved_functions = info.unresolved_functions || info.relocatable;
      } else if ((symbol.st_other & k_sto_cuda_entry) != 0 && !symbol_name->empty()) {
        info.kernels.emplace_back(*symbol_name);
      }
    }
  }
  if (!have_symtab) info.kernels = std::move(text_sections);
  if (compat_a || tkinfo_suffix == 'a') {
    info.arch.variant = fb::ArchVariant::arch_specific;
  } else if (tkinfo_suffix == 'f') {
    info.arch.variant = fb::ArchVariant::family;
  }
  return info;
}

}  // namespace jitcache::fakes::fake_cuda
