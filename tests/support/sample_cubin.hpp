// Cubins for tests, built byte by byte: a 64-bit little-endian CUDA ELF with the fields a PUT's
// check reads (daemon/ops/cubin_target.hpp) and the fake driver's loader checks
// (tests/fakes/fake_cuda/cubin_elf.hpp): an ELF header, the sections .shstrtab, optionally
// .nv.compat and .note.nv.tkinfo, .text.kernel (pseudo-random bytes standing for machine code),
// then the section table. Not a program a GPU could run; real cubins come from nvcc or nvJitLink.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace jitcache::testing {

struct CubinSpec {
  unsigned sm = 90;
  // In .nv.compat (attribute 9 = 1) from ABI version 8, in e_flags (0x800) before, as CUDA does.
  bool arch_specific = false;
  unsigned abi_version = 8;     // 8: CUDA 13 (SM in e_flags bits 8-15); 7: the older layout
  std::uint16_t machine = 190;  // EM_CUDA
  std::uint16_t type = 2;       // ET_EXEC
  std::uint8_t elf_class = 2;   // ELFCLASS64
  std::string tkinfo;           // .note.nv.tkinfo contents when not empty, e.g. "-arch sm_90a -m 64"
};

// The smallest image make_cubin() makes for `spec`.
std::size_t min_cubin_size(const CubinSpec& spec);

// A cubin of max(size, min_cubin_size(spec)) bytes whose code bytes are determined by `seed`.
std::vector<std::uint8_t> make_cubin(const CubinSpec& spec, std::uint64_t seed, std::size_t size);
// A cubin of min_cubin_size(spec) + code.size() bytes whose .text.kernel holds `code`.
std::vector<std::uint8_t> make_cubin(const CubinSpec& spec, const std::vector<std::uint8_t>& code);

}  // namespace jitcache::testing
