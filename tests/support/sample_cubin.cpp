#include <tests/support/sample_cubin.hpp>

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string_view>

namespace jitcache::testing {

namespace {

using namespace std::string_view_literals;
// sv: the names hold NULs.
constexpr std::string_view k_names = "\0.shstrtab\0.nv.compat\0.note.nv.tkinfo\0.text.kernel\0"sv;
constexpr std::uint32_t k_name_shstrtab = 1;
constexpr std::uint32_t k_name_compat = 11;
constexpr std::uint32_t k_name_tkinfo = 22;
constexpr std::uint32_t k_name_text = 38;
// .nv.compat as CUDA 13.0 writes it for sm_90 (attribute 9 is byte 2), measured with nvcc -cubin.
constexpr std::uint8_t k_compat[] = {0x02, 0x09, 0x00, 0x00, 0x02, 0x02, 0x01, 0x00};
constexpr std::uint32_t k_sht_nv_compat = SHT_LOPROC + 0x86;

bool has_compat(const CubinSpec& spec) { return spec.abi_version >= 8; }

std::size_t section_count(const CubinSpec& spec) {
  return 3 + (has_compat(spec) ? 1 : 0) + (spec.tkinfo.empty() ? 0 : 1);
}

std::size_t fixed_bytes(const CubinSpec& spec) {
  return sizeof(Elf64_Ehdr) + k_names.size() + (has_compat(spec) ? sizeof k_compat : 0) + spec.tkinfo.size() +
         section_count(spec) * sizeof(Elf64_Shdr);
}

std::uint32_t e_flags(const CubinSpec& spec) {
  // Measured with CUDA 13.0: 0x06005a04 for sm_90, 0x06006402 for sm_100. The older layout as
  // LLVM's ELF.h gives it: the SM in the low byte, 64-bit addressing 0x400, unified textures 0x100,
  // the virtual SM in bits 16-23, EF_CUDA_ACCELERATORS 0x800 for sm_90a.
  if (spec.abi_version >= 8) return 0x06000000u | (spec.sm << 8) | (spec.sm >= 100 ? 0x02u : 0x04u);
  return spec.sm | 0x500u | (spec.sm << 16) | (spec.arch_specific ? 0x800u : 0u);
}

}  // namespace

std::size_t min_cubin_size(const CubinSpec& spec) { return fixed_bytes(spec); }

std::vector<std::uint8_t> make_cubin(const CubinSpec& spec, std::uint64_t seed, std::size_t size) {
  std::vector<std::uint8_t> code(std::max(size, fixed_bytes(spec)) - fixed_bytes(spec));
  std::mt19937_64 random(seed * 0x9E3779B97F4A7C15ull + size);
  for (auto& byte : code) byte = static_cast<std::uint8_t>(random());
  return make_cubin(spec, code);
}

std::vector<std::uint8_t> make_cubin(const CubinSpec& spec, const std::vector<std::uint8_t>& code) {
  std::vector<std::uint8_t> image(fixed_bytes(spec) + code.size(), 0);

  std::vector<Elf64_Shdr> sections(1);  // the null section
  std::size_t at = sizeof(Elf64_Ehdr);
  auto add = [&](std::uint32_t name, std::uint32_t type, std::uint64_t flags, const void* bytes, std::size_t n) {
    Elf64_Shdr shdr{};
    shdr.sh_name = name;
    shdr.sh_type = type;
    shdr.sh_flags = flags;
    shdr.sh_offset = at;
    shdr.sh_size = n;
    shdr.sh_addralign = 1;
    if (bytes != nullptr && n > 0) std::memcpy(image.data() + at, bytes, n);
    sections.push_back(shdr);
    at += n;
  };
  add(k_name_shstrtab, SHT_STRTAB, 0, k_names.data(), k_names.size());
  if (has_compat(spec)) {
    std::uint8_t compat[sizeof k_compat];
    std::memcpy(compat, k_compat, sizeof compat);
    compat[2] = spec.arch_specific ? 1 : 0;
    add(k_name_compat, k_sht_nv_compat, 0, compat, sizeof compat);
  }
  if (!spec.tkinfo.empty()) add(k_name_tkinfo, SHT_NOTE, 0, spec.tkinfo.data(), spec.tkinfo.size());
  add(k_name_text, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, code.data(), code.size());

  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = spec.elf_class;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_ident[EI_OSABI] = 0x41;  // what CUDA 13.0 writes
  header.e_ident[EI_ABIVERSION] = static_cast<unsigned char>(spec.abi_version);
  header.e_type = spec.type;
  header.e_machine = spec.machine;
  header.e_version = EV_CURRENT;
  header.e_flags = e_flags(spec);
  header.e_ehsize = sizeof(Elf64_Ehdr);
  header.e_shoff = at;
  header.e_shentsize = sizeof(Elf64_Shdr);
  header.e_shnum = static_cast<Elf64_Half>(sections.size());
  header.e_shstrndx = 1;
  std::memcpy(image.data(), &header, sizeof header);
  std::memcpy(image.data() + at, sections.data(), sections.size() * sizeof(Elf64_Shdr));
  return image;
}

}  // namespace jitcache::testing
