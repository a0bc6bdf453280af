#include <client/src/fatbin/elf_extent.hpp>

#include <client/src/fatbin/little_endian.hpp>

#include <algorithm>
#include <common/result.hpp>
#include <span>
#include <string>

namespace jitcache::client::fatbin {
namespace {

using common::ErrorCode;
using common::make_error;

// ELF64 header and table entry offsets (System V gABI).
constexpr std::size_t k_ei_class = 4;
constexpr std::size_t k_ei_data = 5;
constexpr std::size_t k_e_phoff = 32;
constexpr std::size_t k_e_shoff = 40;
constexpr std::size_t k_e_phentsize = 54;
constexpr std::size_t k_e_phnum = 56;
constexpr std::size_t k_e_shentsize = 58;
constexpr std::size_t k_e_shnum = 60;
constexpr std::size_t k_phdr_size = 56;
constexpr std::size_t k_shdr_size = 64;
constexpr std::size_t k_p_offset = 8;
constexpr std::size_t k_p_filesz = 32;
constexpr std::size_t k_sh_type = 4;
constexpr std::size_t k_sh_offset = 24;
constexpr std::size_t k_sh_size = 32;
constexpr std::uint32_t k_sht_nobits = 8;

// Checks that [offset, offset + length) is inside the limit (when there is one) and under the cap,
// and returns its end.
common::Result<std::uint64_t> checked_end(std::uint64_t offset, std::uint64_t length, std::optional<std::size_t> limit,
                                          const std::string& what) {
  if (!fits(offset, length, k_max_elf_size)) {
    return make_error(ErrorCode::corrupt, "ELF image: " + what + " (offset " + std::to_string(offset) + ", " +
                                              std::to_string(length) + " bytes) lies beyond the 1 GiB cap");
  }
  if (limit && !fits(offset, length, *limit)) {
    return make_error(ErrorCode::corrupt, "ELF image: " + what + " (offset " + std::to_string(offset) + ", " +
                                              std::to_string(length) + " bytes) runs past the end of the " +
                                              std::to_string(*limit) + "-byte image (truncated?)");
  }
  return offset + length;
}

}  // namespace

common::Result<std::size_t> elf_extent(const std::byte* image, std::optional<std::size_t> limit) {
  if (limit && *limit < k_elf64_header_size) {
    return make_error(ErrorCode::corrupt,
                      "ELF image: truncated header (" + std::to_string(*limit) + " bytes, 64 needed)");
  }
  const std::span<const std::byte> header(image, k_elf64_header_size);
  if (header[k_ei_class] != std::byte{2} || header[k_ei_data] != std::byte{1}) {
    return make_error(ErrorCode::unsupported, "ELF image: not ELF64 little-endian (a cubin always is)");
  }
  const auto phoff = load_le<std::uint64_t>(header, k_e_phoff);
  const auto shoff = load_le<std::uint64_t>(header, k_e_shoff);
  const auto phentsize = load_le<std::uint16_t>(header, k_e_phentsize);
  const auto phnum = load_le<std::uint16_t>(header, k_e_phnum);
  const auto shentsize = load_le<std::uint16_t>(header, k_e_shentsize);
  const auto shnum = load_le<std::uint16_t>(header, k_e_shnum);
  if (phnum != 0 && phentsize != k_phdr_size) {
    return make_error(ErrorCode::corrupt, "ELF image: program header size " + std::to_string(phentsize) + " is not 56");
  }
  if (shnum != 0 && shentsize != k_shdr_size) {
    return make_error(ErrorCode::corrupt, "ELF image: section header size " + std::to_string(shentsize) + " is not 64");
  }
  if (shnum == 0 && shoff != 0) {
    // Extended section numbering keeps the count in section 0; no cubin needs 65280 sections.
    return make_error(ErrorCode::unsupported, "ELF image: extended section numbering is not supported");
  }

  std::uint64_t extent = k_elf64_header_size;
  JITCACHE_TRY_ASSIGN(const std::uint64_t phdr_end,
                      checked_end(phoff, std::uint64_t{phnum} * k_phdr_size, limit, "program header table"));
  JITCACHE_TRY_ASSIGN(const std::uint64_t shdr_end,
                      checked_end(shoff, std::uint64_t{shnum} * k_shdr_size, limit, "section header table"));
  if (phnum != 0) extent = std::max(extent, phdr_end);
  if (shnum != 0) extent = std::max(extent, shdr_end);

  // The tables are inside the extent the header claims (checked above), so reading them is as safe
  // as the header's own claim.
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::span<const std::byte> section(image + shoff + std::uint64_t{i} * k_shdr_size, k_shdr_size);
    if (load_le<std::uint32_t>(section, k_sh_type) == k_sht_nobits) continue;
    auto end = checked_end(load_le<std::uint64_t>(section, k_sh_offset), load_le<std::uint64_t>(section, k_sh_size),
                           limit, "section " + std::to_string(i));
    JITCACHE_TRY(end);
    extent = std::max(extent, *end);
  }
  for (std::uint16_t i = 0; i < phnum; ++i) {
    const std::span<const std::byte> segment(image + phoff + std::uint64_t{i} * k_phdr_size, k_phdr_size);
    auto end = checked_end(load_le<std::uint64_t>(segment, k_p_offset), load_le<std::uint64_t>(segment, k_p_filesz),
                           limit, "segment " + std::to_string(i));
    JITCACHE_TRY(end);
    extent = std::max(extent, *end);
  }
  return static_cast<std::size_t>(extent);
}

}  // namespace jitcache::client::fatbin
