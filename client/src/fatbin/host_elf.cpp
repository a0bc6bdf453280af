#include <client/src/fatbin/host_elf.hpp>

#include <algorithm>
#include <array>
#include <string_view>

#include <client/src/fatbin/fatbin_format.hpp>
#include <client/src/fatbin/little_endian.hpp>

namespace jitcache::client::fatbin {

namespace {

using common::ErrorCode;
using common::make_error;

// ELF64 header and section header fields used here (the System V gABI, "ELF Header" and
// "Sections"); all little-endian in the files read.
constexpr std::size_t k_ei_class = 4;
constexpr std::size_t k_ei_data = 5;
constexpr std::uint8_t k_elfclass32 = 1;
constexpr std::uint8_t k_elfclass64 = 2;
constexpr std::uint8_t k_elfdata2lsb = 1;
constexpr std::size_t k_e_machine = 18;
constexpr std::size_t k_e_shoff = 40;
constexpr std::size_t k_e_shentsize = 58;
constexpr std::size_t k_e_shnum = 60;
constexpr std::size_t k_e_shstrndx = 62;
constexpr std::size_t k_elf64_header_size = 64;
constexpr std::size_t k_section_header_size = 64;  // the smallest sh entry size of ELF64
constexpr std::size_t k_sh_name = 0;
constexpr std::size_t k_sh_type = 4;
constexpr std::size_t k_sh_offset = 24;
constexpr std::size_t k_sh_size = 32;
constexpr std::size_t k_sh_link = 40;
constexpr std::uint32_t k_sht_nobits = 8;
constexpr std::uint16_t k_shn_xindex = 0xFFFF;

// Rationale: the largest shared libraries in the wild have tens of thousands of sections at most;
// a table claimed larger than this, or a name table larger than this, is taken as damage rather
// than read into memory.
constexpr std::uint64_t k_max_sections = 1 << 20;
constexpr std::uint64_t k_max_name_table = 64 << 20;
// Zero padding is skipped this many bytes at a time.
constexpr std::size_t k_padding_block = 4096;

constexpr std::array<std::string_view, 2> k_fatbin_section_names = {".nv_fatbin", "__nv_relfatbin"};

std::string hex(std::uint64_t value) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string text;
  do {
    text.insert(text.begin(), k_digits[value & 0xF]);
    value >>= 4;
  } while (value != 0);
  return "0x" + text;
}

common::Result<std::vector<std::byte>> read_range(const ReadAt& read, std::uint64_t offset, std::uint64_t size) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  JITCACHE_TRY(read(offset, bytes));
  return bytes;
}

}  // namespace

bool has_elf_magic(std::span<const std::byte> head) {
  return head.size() >= 4 && head[0] == std::byte{0x7F} && head[1] == std::byte{'E'} && head[2] == std::byte{'L'} &&
         head[3] == std::byte{'F'};
}

std::uint16_t elf_machine(std::span<const std::byte> head) {
  if (head.size() < k_elf_ident_size || !has_elf_magic(head)) return 0;
  const auto elf_class = static_cast<std::uint8_t>(head[k_ei_class]);
  if (static_cast<std::uint8_t>(head[k_ei_data]) != k_elfdata2lsb) return 0;
  if (elf_class != k_elfclass32 && elf_class != k_elfclass64) return 0;
  return load_le<std::uint16_t>(head, k_e_machine);  // at the same offset in both classes
}

common::Result<HostElf> read_host_elf(std::uint64_t file_size, const ReadAt& read) {
  if (file_size < k_elf64_header_size) {
    return make_error(ErrorCode::invalid_argument, "not an ELF64 file: " + std::to_string(file_size) + " bytes");
  }
  std::array<std::byte, k_elf64_header_size> header_bytes{};
  JITCACHE_TRY(read(0, header_bytes));
  const std::span<const std::byte> header(header_bytes);
  if (!has_elf_magic(header)) return make_error(ErrorCode::invalid_argument, "not an ELF file (no ELF magic)");
  if (static_cast<std::uint8_t>(header[k_ei_class]) != k_elfclass64 ||
      static_cast<std::uint8_t>(header[k_ei_data]) != k_elfdata2lsb) {
    return make_error(ErrorCode::unsupported, "an ELF file but not 64-bit little-endian");
  }

  HostElf elf;
  elf.machine = load_le<std::uint16_t>(header, k_e_machine);
  const auto table_offset = load_le<std::uint64_t>(header, k_e_shoff);
  const auto entry_size = load_le<std::uint16_t>(header, k_e_shentsize);
  std::uint64_t count = load_le<std::uint16_t>(header, k_e_shnum);
  std::uint32_t names_index = load_le<std::uint16_t>(header, k_e_shstrndx);
  if (table_offset == 0) return elf;  // no section table (stripped of it): nothing to find
  if (entry_size < k_section_header_size) {
    return make_error(ErrorCode::corrupt, "ELF section header size " + std::to_string(entry_size) + " is below 64");
  }
  // More than 0xFF00 sections: e_shnum is 0 and section 0's sh_size holds the count; likewise
  // e_shstrndx is SHN_XINDEX and section 0's sh_link holds the index.
  if (count == 0 || names_index == k_shn_xindex) {
    if (!fits(table_offset, k_section_header_size, file_size)) {
      return make_error(ErrorCode::corrupt, "ELF section table at " + hex(table_offset) + " lies outside the file");
    }
    JITCACHE_TRY_ASSIGN(const auto first, read_range(read, table_offset, k_section_header_size));
    if (count == 0) count = load_le<std::uint64_t>(first, k_sh_size);
    if (names_index == k_shn_xindex) names_index = load_le<std::uint32_t>(first, k_sh_link);
  }
  if (count == 0) return elf;
  if (count > k_max_sections || !fits(table_offset, count * entry_size, file_size)) {
    return make_error(ErrorCode::corrupt, "ELF section table (" + std::to_string(count) + " entries of " +
                                              std::to_string(entry_size) + " bytes at " + hex(table_offset) +
                                              ") lies outside the file");
  }
  if (names_index >= count) {
    return make_error(ErrorCode::corrupt, "ELF section name table index " + std::to_string(names_index) +
                                              " is past the " + std::to_string(count) + " sections");
  }
  JITCACHE_TRY_ASSIGN(const auto table, read_range(read, table_offset, count * entry_size));
  const auto section = [&](std::uint64_t index) {
    return std::span<const std::byte>(table).subspan(static_cast<std::size_t>(index * entry_size),
                                                     k_section_header_size);
  };

  const auto names_header = section(names_index);
  const auto names_offset = load_le<std::uint64_t>(names_header, k_sh_offset);
  const auto names_size = load_le<std::uint64_t>(names_header, k_sh_size);
  if (names_size > k_max_name_table || !fits(names_offset, names_size, file_size)) {
    return make_error(ErrorCode::corrupt, "ELF section name table (" + std::to_string(names_size) + " bytes at " +
                                              hex(names_offset) + ") lies outside the file");
  }
  JITCACHE_TRY_ASSIGN(const auto names, read_range(read, names_offset, names_size));
  const std::string_view name_text(reinterpret_cast<const char*>(names.data()), names.size());

  for (std::uint64_t i = 0; i < count; ++i) {
    const auto entry = section(i);
    const auto name_offset = load_le<std::uint32_t>(entry, k_sh_name);
    if (name_offset >= name_text.size()) continue;  // no name we could look for
    const std::string_view rest = name_text.substr(name_offset);
    const std::string_view name = rest.substr(0, rest.find('\0'));
    if (std::find(k_fatbin_section_names.begin(), k_fatbin_section_names.end(), name) == k_fatbin_section_names.end()) {
      continue;
    }
    if (load_le<std::uint32_t>(entry, k_sh_type) == k_sht_nobits) continue;  // occupies no file bytes
    FatbinSection found;
    found.name = std::string(name);
    found.range.offset = load_le<std::uint64_t>(entry, k_sh_offset);
    found.range.size = load_le<std::uint64_t>(entry, k_sh_size);
    if (!fits(found.range.offset, found.range.size, file_size)) {
      return make_error(ErrorCode::corrupt, "ELF section " + found.name + " (" + std::to_string(found.range.size) +
                                                " bytes at " + hex(found.range.offset) + ") lies outside the file");
    }
    elf.fatbin_sections.push_back(std::move(found));
  }
  return elf;
}

common::Result<std::vector<FileRange>> section_containers(const FatbinSection& section, const ReadAt& read) {
  std::vector<FileRange> containers;
  const std::uint64_t size = section.range.size;
  std::uint64_t at = 0;  // from the start of the section
  while (at < size) {
    const std::uint64_t left = size - at;
    std::array<std::byte, k_container_header_min> header{};
    const std::size_t header_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(left, header.size()));
    JITCACHE_TRY(read(section.range.offset + at, std::span(header).first(header_bytes)));
    const std::span<const std::byte> head(header.data(), header_bytes);
    const auto word = head.first(std::min<std::size_t>(header_bytes, k_container_alignment));
    if (std::all_of(word.begin(), word.end(), [](std::byte b) { return b == std::byte{0}; })) {
      // Padding: skip the zero words, a block at a time, up to the next word that is not zero.
      std::vector<std::byte> block(static_cast<std::size_t>(std::min<std::uint64_t>(left, k_padding_block)));
      JITCACHE_TRY(read(section.range.offset + at, block));
      std::size_t zeros = 0;
      while (zeros < block.size() && block[zeros] == std::byte{0}) ++zeros;
      at += zeros == block.size() ? zeros : zeros / k_container_alignment * k_container_alignment;
      continue;
    }
    const std::string where = section.name + " at offset " + hex(at);
    if (header_bytes < k_container_header_min || load_le<std::uint32_t>(head, 0) != k_container_magic) {
      return make_error(ErrorCode::corrupt, where + ": neither a fat binary container nor zero padding");
    }
    const auto header_size = load_le<std::uint16_t>(head, 6);
    const auto fat_size = load_le<std::uint64_t>(head, 8);
    if (header_size < k_container_header_min || !fits(header_size, fat_size, left)) {
      return make_error(ErrorCode::corrupt, where + ": the container (header " + std::to_string(header_size) +
                                                " bytes, " + std::to_string(fat_size) +
                                                " bytes of entries) runs past the section's end");
    }
    const std::uint64_t length = header_size + fat_size;
    containers.push_back(FileRange{section.range.offset + at, length});
    at += (length + k_container_alignment - 1) / k_container_alignment * k_container_alignment;
  }
  return containers;
}

}  // namespace jitcache::client::fatbin
