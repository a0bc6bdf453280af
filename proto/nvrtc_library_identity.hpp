// The identity of an NVRTC library as an NVRTC key names it (NvrtcIdentity, nvrtc_key.hpp;
// docs/cache-key.md "NVRTC compiles"), computed one way wherever NVRTC runs: in a program's process
// for the NVRTC it called (client/src/nvrtc/nvrtc_identity.hpp) and in the daemon's compile worker
// for the NVRTC the administrator configured (compile_nvrtc_library, docs/compile-service.md
// "NVRTC"). Two NVRTCs with one identity give one key, so this is the only place that says what
// the identity covers: nvrtcVersion, the XXH3-128 of the library file that holds `nvrtc_function`
// (named by dladdr, as the dynamic loader opened it), and of "libnvrtc-builtins.so.<major>.<minor>"
// in the same directory (for the toolkit's alternative libnvrtc.alt.so.<major>,
// "libnvrtc-builtins.alt.so.<major>.<minor>"), which NVRTC 13.0 opens by that full path at its first compile (observed
// with strace, docs/cache-key.md).
// Errors: ErrorCode::unsupported when the library cannot be named, read, or asked its version.
// Thread safety: pure, apart from the reads of the two files.
#pragma once

#include <functional>
#include <string>

#include <common/result.hpp>
#include <proto/digest.hpp>
#include <proto/nvrtc_key.hpp>

namespace jitcache::proto {

// How a file's bytes are digested: the client remembers digests across processes, the worker reads.
using NvrtcFileDigest = std::function<common::Result<Checksum128>(const std::string& path)>;

common::Result<NvrtcIdentity> nvrtc_library_identity(const void* nvrtc_function, int (*version)(int*, int*),
                                                     const NvrtcFileDigest& digest);

// XXH3-128 of a regular file's bytes (mapped, not copied); ErrorCode::unsupported when it cannot be
// opened, is not a regular file or cannot be mapped.
common::Result<Checksum128> mapped_file_xxh3(const std::string& path);
// The same of an open regular file of `size` bytes (the caller stat'ed that descriptor, so the
// digest is of the file it stat'ed); `path` names it in errors. The descriptor stays open.
common::Result<Checksum128> mapped_descriptor_xxh3(int fd, std::size_t size, const std::string& path);

}  // namespace jitcache::proto
