// Validation of a cubin (CUDA ELF) as the driver would need it before loading, and what the fake
// remembers of it: the SM it was built for, its `a`/`f` variant, and its kernels.
//
// Checks: ELF magic, ELFCLASS64, little-endian, e_machine 190 (EM_CUDA), ET_EXEC (or ET_REL, which the
// driver also loads), header sizes, the section and program header tables and every section, segment,
// section name and symbol name inside the image, and a non-zero SM. Where the arch comes from
// (docs/driver-facts.md §3 "The cubin ELF inside"): the SM is e_flags bits 8–15 (ABI version >= 8; the low byte
// in the older layout [I]); `a` is the .nv.compat attribute 9 set to 1, or "-arch sm_XYa" in
// .note.nv.tkinfo; `f` shows only in the tkinfo command line.
// Thread safety: pure functions.
#pragma once

#include <client/src/fatbin/fatbin_entry.hpp>
#include <common/result.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace jitcache::fakes::fake_cuda {

namespace fb = jitcache::client::fatbin;

inline constexpr unsigned k_em_cuda = 190;

struct CubinInfo {
  fb::Arch arch;
  bool relocatable = false;  // ET_REL
  // Entry functions: STT_FUNC symbols flagged as CUDA entries (st_other 0x10), or, in a cubin
  // without a symbol table, the <name> of every .text.<name> section.
  std::vector<std::string> kernels;
  // An ET_REL cubin that calls a function it does not define. [E] The driver loads it and then finds
  // none of its kernels (docs/driver-facts.md §4, row 302), so the fake does the same.
  bool unresolved_functions = false;
};

// Errors are ErrorCode::corrupt with a message naming the field that is wrong.
common::Result<CubinInfo> inspect_cubin(std::span<const std::byte> image);

// How far the image's headers say it extends, given its first bytes. With only the 64-byte ELF header
// this is the end of its header tables; with the tables too, the end of the furthest section/segment.
// Errors (corrupt) for fields no valid cubin has; the result is capped at fb::k_max_elf_size.
common::Result<std::size_t> elf_tables_end(std::span<const std::byte> header);
common::Result<std::size_t> elf_image_end(std::span<const std::byte> header_and_tables);

}  // namespace jitcache::fakes::fake_cuda
