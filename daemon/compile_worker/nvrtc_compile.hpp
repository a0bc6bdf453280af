// One NVRTC job in the compile worker (docs/compile-service.md "NVRTC"): opens the library the
// configuration names, checks that it is still the library the daemon probed (its identity, as the
// key names it: proto/nvrtc_library_identity.hpp), loads its builtins, takes the file system away
// (no_file_access.hpp), and compiles the program as the caller's NVRTC would have: create with
// its headers, add its name expressions, compile with its options, then ask every question a
// program can ask afterwards (proto/nvrtc_answers.hpp).
//
// The reply (daemon/compile/worker_protocol.hpp): compiled with the encoded result when NVRTC
// answered NVRTC_SUCCESS or NVRTC_ERROR_COMPILATION (the source's answer, stored either way);
// refused with a sentence when the library changed, the filter cannot be installed, or NVRTC
// failed for another reason (out of memory, an internal error: not the source's answer).
// Thread safety: one call per process (the worker runs one job).
#pragma once

#include <daemon/compile/compile_job.hpp>
#include <daemon/compile/worker_protocol.hpp>

namespace jitcache::daemon::compile_worker {

compile::WorkerReply compile_with_nvrtc(const compile::NvrtcJob& job);

}  // namespace jitcache::daemon::compile_worker
