// How an NVRTC compile's options enter its key (docs/cache-key.md "NVRTC compiles"). Every option
// the program passed to nvrtcCompileProgram is classified by a table of NVRTC's options
// (nvrtc_options.cpp, from the NVRTC 13.0 user guide's "Supported Compile Options"):
//
//   keyed        changes what NVRTC produces (-arch, -D, -std, -G, ...): kept verbatim, in order
//   include      an include path (-I, --include-path) or a pre-included file (-include,
//                --pre-include): kept verbatim and handed to the include scanner
//                (client/src/nvrtc/include_scan.hpp), which records what each names on disk
//   side effect  writes or reads files besides the program's headers, or depends on timing
//                (--create-pch, --use-pch, --pch-dir, -pch, --time, -fdevice-time-trace, ...):
//                the compile is NVRTC's own
//   unknown      anything the table lacks: the compile is NVRTC's own
//
// The canonical form is the options in the program's order, verbatim (NVRTC's meaning depends on
// the order of -I, -D and -U): two spellings of one option are two keys, a miss, never a wrong hit.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <common/result.hpp>

namespace jitcache::proto {

enum class NvrtcOptionClass { keyed, include_path, pre_include, side_effect, unknown };

struct NvrtcOptionInfo {
  NvrtcOptionClass kind;
  std::string value;  // the directory or file of include_path / pre_include; the -arch value
};

NvrtcOptionInfo classify_nvrtc_option(std::string_view option);

struct NvrtcOptions {
  std::vector<std::string> keyed;          // every option, verbatim, in order
  std::vector<std::string> include_paths;  // -I / --include-path values, in order
  std::vector<std::string> pre_includes;   // -include / --pre-include values, in order
  std::string arch;                        // the key's arch field: "sm_90" for -arch=compute_90 or sm_90
  bool debug_info = false;                 // -G / -lineinfo: the output may name the working directory
};

// ErrorCode::unsupported naming the option when any option is a side effect or unknown (the
// compile passes through), or when more than one -arch is given.
common::Result<NvrtcOptions> canonicalize_nvrtc_options(int count, const char* const* options);

}  // namespace jitcache::proto
