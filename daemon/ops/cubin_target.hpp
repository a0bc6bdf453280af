// What a cubin's own ELF headers say it was built for, read by the daemon before a PUT stores it
// (image_check.hpp). Checks that the bytes are a whole 64-bit little-endian CUDA ELF: magic,
// ELFCLASS64, ELFDATA2LSB, e_machine 190 (EM_CUDA), ET_EXEC or ET_REL, the header sizes, and every
// header table, section and segment inside the image. Where the arch comes from
// (docs/entry-format.md "What a PUT may store" gives the sources):
//   - the SM number is e_flags bits 8-15 from ELF ABI version 8 on (CUDA 13 writes 8), its low
//     byte before (EF_CUDA_SM);
//   - arch-specific (sm_XYa): e_flags 0x800 before ABI 8 (EF_CUDA_ACCELERATORS), or from ABI 8 on
//     e_flags 0x8, attribute 9 of .nv.compat set to 1, or "-arch sm_XYa" in .note.nv.tkinfo
//     (e_flags is the same for sm_90 and sm_90a cubins of CUDA 13.0).
// Family (sm_XYf) cubins carry no mark nvJitLink's output keeps, and need none here: a family
// cubin serves the keys a plain one of its SM does.
//
// Thread safety: pure function.
#pragma once

#include <common/result.hpp>
#include <proto/digest.hpp>

namespace jitcache::daemon::ops {

struct CubinTarget {
  unsigned sm = 0;  // 90 for sm_90, 100 for sm_100
  bool arch_specific = false;
  unsigned abi_version = 0;  // EI_ABIVERSION
};

// ErrorCode::invalid_argument naming the first thing that is wrong ("it does not start with the ELF
// magic", "section 3 runs past the end of the image").
common::Result<CubinTarget> read_cubin_target(proto::Bytes image);

}  // namespace jitcache::daemon::ops
