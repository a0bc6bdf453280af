#include <daemon/ops/cubin_target.hpp>

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace jitcache::daemon::ops {

using common::ErrorCode;

namespace {

constexpr std::uint16_t k_em_cuda = 190;
// The first ELF ABI version with the SM in e_flags bits 8-15 (CUDA 13.0 writes 8).
constexpr unsigned k_abi_sm_in_second_byte = 8;
// e_flags marks of an arch-specific cubin: EF_CUDA_ACCELERATORS in LLVM's ELF.h, old and new layout.
constexpr std::uint32_t k_accelerators_before_abi_8 = 0x800;
constexpr std::uint32_t k_accelerators_from_abi_8 = 0x8;
// .nv.compat attribute 9 holds 1 in an sm_XYa cubin (measured with CUDA 13.0: nvcc and nvJitLink).
constexpr std::uint8_t k_compat_arch_specific = 9;
// Rationale: no SM below sm_10 ever existed; such a number is a header that is not a cubin's.
constexpr unsigned k_lowest_sm = 10;

common::Error refuse(const std::string& why) {
  return common::make_error(ErrorCode::invalid_argument, "the image is not a cubin: " + why);
}

template <class T>
T read_at(proto::Bytes bytes, std::uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// offset + length <= size, without overflow.
bool inside(std::uint64_t offset, std::uint64_t length, std::uint64_t size) {
  return offset <= size && length <= size - offset;
}

bool looks_like_text(proto::Bytes image) {
  const std::size_t n = std::min<std::size_t>(image.size(), 64);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = image[i];
    if (c != '\n' && c != '\r' && c != '\t' && (c < 0x20 || c > 0x7e)) return false;
  }
  return n > 0;
}

std::optional<std::string_view> string_at(proto::Bytes table, std::uint64_t offset) {
  if (offset >= table.size()) return std::nullopt;
  const auto* start = reinterpret_cast<const char*>(table.data() + offset);
  const void* nul = std::memchr(start, '\0', table.size() - offset);
  if (nul == nullptr) return std::nullopt;
  return std::string_view(start, static_cast<std::size_t>(static_cast<const char*>(nul) - start));
}

// Records of .nv.compat as in .nv.info: u8 format, u8 attribute, then by format: 1 nothing, 2 a
// byte and a pad byte, 3 a u16, 4 a u16 length and that many bytes.
bool compat_marks_arch_specific(proto::Bytes compat) {
  std::size_t i = 0;
  while (i + 2 <= compat.size()) {
    const std::uint8_t format = compat[i];
    const std::uint8_t attribute = compat[i + 1];
    if (format == 1) {
      i += 2;
    } else if (format == 2 || format == 3) {
      if (i + 4 > compat.size()) return false;
      if (format == 2 && attribute == k_compat_arch_specific) return compat[i + 2] == 1;
      i += 4;
    } else if (format == 4) {
      if (i + 4 > compat.size()) return false;
      i += 4 + std::size_t{read_at<std::uint16_t>(compat, i + 2)};
    } else {
      return false;
    }
  }
  return false;
}

// "-arch sm_90a" in the toolkit note (ptxas writes its command line there; nvJitLink does not).
bool tkinfo_marks_arch_specific(proto::Bytes note) {
  const std::string_view text(reinterpret_cast<const char*>(note.data()), note.size());
  constexpr std::string_view k_marker = "-arch sm_";
  const auto at = text.rfind(k_marker);
  if (at == std::string_view::npos) return false;
  std::size_t i = at + k_marker.size();
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  return i < text.size() && text[i] == 'a';
}

}  // namespace

common::Result<CubinTarget> read_cubin_target(proto::Bytes image) {
  if (image.size() < sizeof(Elf64_Ehdr)) {
    return refuse(std::to_string(image.size()) + " bytes are fewer than an ELF header's 64");
  }
  if (std::memcmp(image.data(), ELFMAG, SELFMAG) != 0) {
    return refuse(looks_like_text(image)
                      ? "it is text, not an ELF file (PTX? a PUT stores the compiled cubin, not its source)"
                      : "it does not start with the ELF magic");
  }
  const auto header = read_at<Elf64_Ehdr>(image, 0);
  if (header.e_ident[EI_CLASS] != ELFCLASS64) return refuse("it is not a 64-bit ELF (ELFCLASS64)");
  if (header.e_ident[EI_DATA] != ELFDATA2LSB) return refuse("it is not a little-endian ELF");
  if (header.e_machine != k_em_cuda) {
    return refuse("its e_machine " + std::to_string(header.e_machine) +
                  " is not EM_CUDA (190): an ELF for another processor");
  }
  if (header.e_type != ET_EXEC && header.e_type != ET_REL) {
    return refuse("its e_type " + std::to_string(header.e_type) + " is neither ET_EXEC nor ET_REL");
  }
  if (header.e_ehsize != sizeof(Elf64_Ehdr)) return refuse("its e_ehsize is not 64");
  if (header.e_shnum == 0) return refuse("it has no section table");
  if (header.e_shentsize != sizeof(Elf64_Shdr)) return refuse("its e_shentsize is not 64");
  if (!inside(header.e_shoff, std::uint64_t{header.e_shnum} * sizeof(Elf64_Shdr), image.size())) {
    return refuse("its section table runs past the end of the image (truncated?)");
  }
  if (header.e_phnum != 0) {
    if (header.e_phentsize != sizeof(Elf64_Phdr)) return refuse("its e_phentsize is not 56");
    if (!inside(header.e_phoff, std::uint64_t{header.e_phnum} * sizeof(Elf64_Phdr), image.size())) {
      return refuse("its program header table runs past the end of the image (truncated?)");
    }
  }
  for (std::size_t i = 0; i < header.e_phnum; ++i) {
    const auto phdr = read_at<Elf64_Phdr>(image, header.e_phoff + i * sizeof(Elf64_Phdr));
    if (!inside(phdr.p_offset, phdr.p_filesz, image.size())) {
      return refuse("segment " + std::to_string(i) + " runs past the end of the image (truncated?)");
    }
  }
  auto section = [&](std::size_t i) { return read_at<Elf64_Shdr>(image, header.e_shoff + i * sizeof(Elf64_Shdr)); };
  for (std::size_t i = 0; i < header.e_shnum; ++i) {
    const auto shdr = section(i);
    if (shdr.sh_type != SHT_NOBITS && !inside(shdr.sh_offset, shdr.sh_size, image.size())) {
      return refuse("section " + std::to_string(i) + " runs past the end of the image (truncated?)");
    }
  }
  if (header.e_shstrndx != SHN_UNDEF && header.e_shstrndx >= header.e_shnum) {
    return refuse("its e_shstrndx is past its section table");
  }

  CubinTarget target;
  target.abi_version = header.e_ident[EI_ABIVERSION];
  const bool new_layout = target.abi_version >= k_abi_sm_in_second_byte;
  target.sm = new_layout ? (header.e_flags >> 8) & 0xFFu : header.e_flags & 0xFFu;
  if (target.sm < k_lowest_sm) {
    return refuse("its e_flags name no SM (ELF ABI version " + std::to_string(target.abi_version) + ")");
  }
  target.arch_specific = (header.e_flags & (new_layout ? k_accelerators_from_abi_8 : k_accelerators_before_abi_8)) != 0;
  const auto names_header = section(header.e_shstrndx);
  if (header.e_shstrndx != SHN_UNDEF && names_header.sh_type != SHT_NOBITS) {
    const proto::Bytes names = image.subspan(names_header.sh_offset, names_header.sh_size);
    for (std::size_t i = 0; i < header.e_shnum && !target.arch_specific; ++i) {
      const auto shdr = section(i);
      const auto name = string_at(names, shdr.sh_name);
      if (!name || shdr.sh_type == SHT_NOBITS) continue;
      const proto::Bytes contents = image.subspan(shdr.sh_offset, shdr.sh_size);
      if (*name == ".nv.compat") target.arch_specific = compat_marks_arch_specific(contents);
      if (*name == ".note.nv.tkinfo") target.arch_specific = tkinfo_marks_arch_specific(contents);
    }
  }
  return target;
}

}  // namespace jitcache::daemon::ops
