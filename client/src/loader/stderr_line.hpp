// Writes one line to the program's standard error, the only stream libjitcache ever writes to (the
// warning, the report's "cannot write" line), without harming the program:
//   - only to the stderr the program had: its identity (device and inode of fd 2) is recorded when
//     the library is loaded, and the line is dropped when fd 2 is closed or is another file now (a
//     program that closed 0-2 and opened its data files gets no line in them); no descriptor is
//     held for it;
//   - never with a signal: a socket gets send(MSG_NOSIGNAL); anything else is written with SIGPIPE
//     blocked in the calling thread, and a SIGPIPE the write raised (a closed pipe) is taken back
//     with sigtimedwait before the mask is restored, unless one was already pending for the program;
//   - in one write(2), so it is not interleaved with the program's own output.
// docs/client-guide.md "Streams" documents these rules.
// Thread safety: safe from any thread; async-signal-unsafe (it is never called from a handler).
#pragma once

#include <string_view>

namespace jitcache::client::loader {

// Returns true when the whole line was written.
bool write_stderr_line(std::string_view line);

// Records fd 2's identity now (called by the library's constructor; tests call it again).
void record_program_stderr();

// Takes the identity someone who was loaded earlier recorded (the preload shim, at process start):
// `open` false when fd 2 was closed then.
void adopt_program_stderr(bool open, unsigned long long device, unsigned long long inode);

}  // namespace jitcache::client::loader
