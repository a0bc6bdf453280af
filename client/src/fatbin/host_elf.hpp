// The fat binaries a host program or shared library carries (docs/fatbin.md "In executables and
// shared libraries"): nvcc puts them in the ELF sections `.nv_fatbin` (what the CUDA runtime
// registers and loads) and `__nv_relfatbin` (relocatable device code for a later device link),
// each holding several containers back to back (docs/driver-facts.md §3). `jitcache warm` walks
// every one of them as a load would.
//
// The file is read through a callback, piece by piece: its header, its section table and names,
// then each container header; a shared library of a few GiB is never read whole. Every offset
// and size read from the file is checked against the file's size before it is used: a table, a
// name or a section outside the file is ErrorCode::corrupt, naming the field. Only ELF64
// little-endian files are read (ErrorCode::unsupported otherwise).
// Thread safety: pure functions; `read` is called on the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <common/result.hpp>

namespace jitcache::client::fatbin {

inline constexpr std::uint16_t k_elf_machine_cuda = 190;  // EM_CUDA: a cubin, not a host binary
inline constexpr std::size_t k_elf_ident_size = 20;       // bytes has_elf_magic/elf_machine look at

// Fills `into` with the file's bytes from `offset` on, all of them, or fails.
using ReadAt = std::function<common::Result<void>(std::uint64_t offset, std::span<std::byte> into)>;

struct FileRange {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

struct FatbinSection {
  std::string name;  // ".nv_fatbin" or "__nv_relfatbin"
  FileRange range;   // its bytes in the file
};

struct HostElf {
  std::uint16_t machine = 0;                   // e_machine (62: x86-64, 183: AArch64)
  std::vector<FatbinSection> fatbin_sections;  // in section table order; empty: no device code
};

// Whether the file's first bytes (`head`, at least 4 of them) are the ELF magic.
bool has_elf_magic(std::span<const std::byte> head);
// e_machine of an ELF64 or ELF32 little-endian file from its first k_elf_ident_size bytes; 0 when
// `head` is shorter or not such a file.
std::uint16_t elf_machine(std::span<const std::byte> head);

common::Result<HostElf> read_host_elf(std::uint64_t file_size, const ReadAt& read);

// The containers of a fat binary section, each 8-byte aligned, with only zero bytes between and
// after them; each range covers one container's header and entries. A section holding something
// else (a container header that runs past the section, a non-zero byte between containers) is
// ErrorCode::corrupt naming the offset in the section.
common::Result<std::vector<FileRange>> section_containers(const FatbinSection& section, const ReadAt& read);

}  // namespace jitcache::client::fatbin
