// The NVRTC the administrator configured (`compile_nvrtc_library`, docs/compile-service.md
// "NVRTC"), opened in the worker and never in the daemon: a library that crashes or hangs when it
// is loaded takes down one worker. The daemon never opens a library a caller names; only the
// configuration names this one.
// `jitcache-compile --nvrtc-identity PATH` prints what the daemon learns of it at its probe, the
// identity an NVRTC key names (proto/nvrtc_library_identity.hpp, the code the client uses for the
// NVRTC a program called):
//
//   NVRTC <major>.<minor> <XXH3-128 of the library, 32 hex> <XXH3-128 of its builtins, 32 hex>
//
// Thread safety: one call at a time per process (the worker runs one).
#pragma once

#include <string>

#include <common/result.hpp>
#include <proto/nvrtc_key.hpp>

namespace jitcache::daemon::compile_worker {

// ErrorCode::unsupported with a sentence naming the path and what is wrong: it cannot be loaded, it
// lacks one of NVRTC's functions (not an NVRTC library), or its files cannot be read.
common::Result<proto::NvrtcIdentity> configured_nvrtc_identity(const std::string& library_path);

// The line `--nvrtc-identity` prints.
std::string nvrtc_identity_line(const proto::NvrtcIdentity& identity);

}  // namespace jitcache::daemon::compile_worker
