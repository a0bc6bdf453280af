// The nvJitLink option canonicaliser: the option list a program hands nvJitLinkCreate → the arch
// and the options that are part of a link session's key (docs/cache-key.md "Link sessions").
//
// Each option is one of:
//   arch      -arch=sm_XY[a|f]: the key's arch field (any other -arch, e.g. compute_90 or lto_90,
//             makes the session uncacheable)
//   keyed     an option that changes the linked code (-O<n>, -maxrregcount=, -g, -lineinfo, -lto,
//             -ftz=, -prec-div=, -prec-sqrt=, -fma=, -kernels-used=, -variables-used=,
//             -optimize-unused-variables, -Xptxas=, -Xnvvm=, -split-compile=,
//             -split-compile-extended=, -jump-table-density=, -device-stack-protector): kept
//             verbatim, in the order given
//   log       -verbose, -time, -no-cache: honoured by the real link, not keyed
//   other     -ptx (the output is PTX, which is not cached) and every option this table lacks: the
//             session is uncacheable, and the program gets exactly nvJitLink's own answers
//
// Rationale for "verbatim, in the order given" rather than sorted with defaults filled in: nvJitLink
// records its command line in the cubin (docs/driver-facts.md §2: an explicit -O3, the default,
// changes the bytes), and whether a later option overrides an earlier one is nvJitLink's business.
// Two spellings of one option set then cost two entries, never a wrong image.
// Thread safety: free functions.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <common/result.hpp>

namespace jitcache::proto {

struct NvJitLinkOptions {
  std::string arch;                // "sm_90", from -arch=
  std::vector<std::string> keyed;  // the keyed options, verbatim, in the order given
  bool asks_for_log = false;       // -verbose or -time: the program reads the info log
};

// ErrorCode::unsupported, naming the option, when the session cannot be keyed: a missing or
// repeated -arch, an -arch that is not sm_XY[a|f], -ptx, an unknown option, or an option that the
// key's text cannot spell (empty, whitespace, ';', a byte outside printable ASCII).
common::Result<NvJitLinkOptions> canonicalize_nvjitlink_options(std::span<const std::string_view> options);

// The keyed options as the key's option string spells them (jit_options.hpp "nvjitlink="): joined
// by one space.
std::string join_nvjitlink_options(const std::vector<std::string>& keyed);
// The reverse: the text split on whitespace, every piece a keyed option; ErrorCode::invalid_argument
// naming the first piece that is not. Empty text is the empty list.
common::Result<std::vector<std::string>> parse_nvjitlink_option_list(std::string_view text);

}  // namespace jitcache::proto
