// Which NVRTC compiles the daemon runs itself (NVRTC_COMPILE, docs/compile-service.md "NVRTC"), one
// rule for the client that asks and the daemon that decides (the daemon never takes the client's
// word for it). The daemon's compile must read nothing from disk, so that it cannot read for a
// caller what the caller could not, and so that its answer is the answer of every caller whose
// compile read nothing from disk either. Eligible is a program whose options are keyed (no unknown
// or side-effect option: nvrtc_options.hpp) and
//
//   - name no include path or pre-included file (-I, --include-path, -include, --pre-include)
//   - do not ask for -G or -lineinfo (the output would name the daemon's working directory)
//   - whose include record (client/src/nvrtc/include_scan.hpp: one "path\0state\n" per path the
//     compile may read) says every path absent, each relative and without a ".." part: every
//     include resolves to a header given at create or to NVRTC's builtins, in the caller's
//     working directory as in the daemon's, where every path is absent
//     (daemon/compile_worker/no_file_access.hpp)
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <common/result.hpp>
#include <proto/nvrtc_compile_messages.hpp>
#include <proto/nvrtc_key.hpp>
#include <proto/nvrtc_options.hpp>

namespace jitcache::proto {

// Why the daemon does not compile it (a sentence); nullopt: eligible.
std::optional<std::string> nvrtc_daemon_refusal(const NvrtcOptions& options, std::string_view include_record);

// The key input of `program` compiled with `identity`: its options canonicalised
// (ErrorCode::unsupported naming an unknown or side-effect option), the working directory empty.
common::Result<NvrtcCompileInput> nvrtc_compile_input_of(const NvrtcProgramText& program, const NvrtcIdentity& identity,
                                                         std::string include_record);

}  // namespace jitcache::proto
