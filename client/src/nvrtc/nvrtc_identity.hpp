// The identity of the NVRTC a program called (docs/cache-key.md "NVRTC compiles"): nvrtcVersion and
// the XXH3-128 of the library file holding `real_function` (dladdr) and of the libnvrtc-builtins
// beside it, "libnvrtc-builtins.so.<major>.<minor>" in the same directory (for the toolkit's
// alternative libnvrtc.alt.so.<major>, "libnvrtc-builtins.alt.so.<major>.<minor>"): NVRTC 13.0 opens that
// file by its full path on its first compile (observed with strace, docs/cache-key.md), whatever
// LD_LIBRARY_PATH says. Hashed once per process and library (proto/nvrtc_key.hpp says why XXH3),
// and remembered across processes in this uid's private directory (compile_lock.hpp) under the
// file's device, inode, size, mtime and ctime: a file changed in place or replaced changes its
// ctime or inode, which no user can set back, so a remembered digest is of the same bytes.
// Errors: ErrorCode::unsupported when the library cannot be named, read, or asked its version.
// Thread safety: safe from any thread; computed once per loaded library.
#pragma once

#include <common/result.hpp>
#include <proto/nvrtc_key.hpp>

namespace jitcache::client::nvrtc {

common::Result<proto::NvrtcIdentity> nvrtc_identity(const void* real_function, int (*version)(int*, int*));

// XXH3-128 of a file's bytes (mapped, not copied); ErrorCode::unsupported when it cannot be read.
common::Result<proto::Checksum128> file_digest(const std::string& path);

}  // namespace jitcache::client::nvrtc
