// What jitcached says when a memory-mapped read of its store fails. With `store_mmap_size` > 0 the
// read connections map the database file (docs/configuration.md); an I/O error under a mapped page,
// or the file shrinking underneath the daemon, then arrives as SIGBUS rather than as an error code.
// The daemon cannot continue from inside SQLite, so it still ends, but it says why and how to avoid
// it before the default action (a core dump) runs; a supervisor (systemd's Restart=) starts it again
// and the start-up check of the store runs.
//
// Thread safety: call once, at start-up, before threads that read the store exist.
#pragma once

namespace jitcache::daemon::startup {

// Installs a one-shot SIGBUS handler that writes the explanation to `fd` (stderr, or the log file
// opened for appending) and lets the signal's default action follow.
void explain_mapped_store_faults(int fd);

}  // namespace jitcache::daemon::startup
