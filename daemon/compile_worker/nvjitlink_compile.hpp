// The worker's one compile: a job → nvJitLink → a reply. Every nvJitLink return code is checked,
// because a failed AddData is followed by a "successful" Complete with a useless cubin
// (docs/driver-facts.md §2).
// Thread safety: one call at a time per process (the worker runs one).
#pragma once

#include <string>

#include <daemon/compile/compile_job.hpp>
#include <daemon/compile/worker_protocol.hpp>

namespace jitcache::daemon::compile_worker {

compile::WorkerReply compile_with_nvjitlink(const compile::CompileJob& job);

// nvJitLinkVersion as "nvJitLink 13.0"; the first line `jitcache-compile --version` prints.
std::string nvjitlink_version_text();
// The build of the nvJitLink library this worker runs, as a link's key names it
// (proto/linker_identity.hpp): "13000 nvjitlink-13.0-98806736", the second line of `--version`;
// empty when it cannot be told.
std::string nvjitlink_identity_text();

}  // namespace jitcache::daemon::compile_worker
