// Takes the file system away from the compile worker before it runs an NVRTC compile: a seccomp
// filter answers ENOENT to every call that opens, stats, or executes a path (open, openat,
// openat2, creat, stat, lstat, newfstatat, statx, access, faccessat, faccessat2, readlink,
// readlinkat, execve, execveat, uselib, name_to_handle_at, open_by_handle_at, io_uring_setup), and
// kills the worker on a call made in another system call ABI (x32, i386), where these calls have
// other numbers.
//
// Rationale: the worker runs as the daemon's user, who may read files the caller may not; NVRTC
// follows `#include "/any/path"` and quotes what it read in its log. The request's include record
// and options are the caller's claims; the filter makes the compile read nothing whatever the
// source says: every path is absent, as in an empty working directory with no include path, which
// is the only compile the daemon runs (proto/nvrtc_daemon_eligibility.hpp). NVRTC opens its
// builtins library at its first compile (docs/cache-key.md), so the worker loads it before.
// Measured with NVRTC 13.0: a program that includes /etc/passwd gets "cannot open source file"
// under the filter and the file's first line in its log without it
// (tests/integration/test_nvrtc_daemon_compile.cpp).
// Thread safety: call once, on the worker's only thread; it holds for every thread after.
#pragma once

#include <common/result.hpp>

namespace jitcache::daemon::compile_worker {

// ErrorCode::unsupported when the kernel refuses the filter (no seccomp): the worker then refuses
// the job rather than compile with the file system in reach.
common::Result<void> forbid_file_access();

}  // namespace jitcache::daemon::compile_worker
