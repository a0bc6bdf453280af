// Where the process report (process_report.hpp) goes, and how it is written there without harming
// whatever the path names (docs/process-report.md "Where the report goes"):
//   - nothing there, or a regular file: a temporary file beside it, renamed over it when whole
//     (a reader sees a whole report or the old one; O_EXCL with an unpredictable name, so a file or
//     hard link someone planted in a shared directory is never written through);
//   - a character device, a FIFO (/dev/null, /dev/full, /dev/tty, a named pipe): written into in
//     place, never replaced (root replacing /dev/null with a regular file breaks the host); a FIFO
//     no process reads is an error (ENXIO), not a wait;
//   - a symbolic link to one of those (/dev/stderr, /dev/stdout, /dev/fd/N): written into in place;
//     a link to a regular file (/dev/stderr when stderr is a file) is appended to through the link,
//     never renamed over, when the link belongs to root or to this uid (one someone else planted is
//     refused: EPERM);
//   - a directory, a block device, a socket: refused (EISDIR, EPERM, ENXIO).
// Writes never raise SIGPIPE (quiet_write.hpp).
// Thread safety: free functions; the caller serialises writes to one path.
#pragma once

#include <string>
#include <string_view>

namespace jitcache::client::loader {

// Writes `text` to `path` by the rules above. Returns 0, or the errno of the step that failed.
int write_report_destination(const std::string& path, std::string_view text);

}  // namespace jitcache::client::loader
