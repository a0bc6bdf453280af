// A system-call filter for a child process, standing in for systemd's SystemCallFilter= where no
// systemd runs: the calls of a group fail with EPERM, as under the shipped unit's
// `SystemCallFilter=~@privileged` with `SystemCallErrorNumber=EPERM` (packaging/systemd/).
// Thread safety: call it in a freshly forked child before exec; it makes only system calls.
#pragma once

namespace jitcache::testing {

// Whether this build knows the system-call numbers to filter on this architecture.
bool can_refuse_chown();

// Makes chown, fchown, fchownat and lchown fail with EPERM in this process and what it execs
// (seccomp, after PR_SET_NO_NEW_PRIVS, so it works without privileges and cannot be undone).
// Returns false when the kernel refused the filter.
bool refuse_chown();

}  // namespace jitcache::testing
