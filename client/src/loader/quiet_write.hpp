// write(2) of a whole buffer that never raises a signal in the program: SIGPIPE is blocked in the
// calling thread while it writes, and one the write raised (a pipe or FIFO whose reader is gone)
// is taken back with sigtimedwait before the mask is restored, unless the program already had one
// pending. A socket is written with send(MSG_NOSIGNAL) instead. libjitcache installs no signal
// handler and changes no process-wide signal state (docs/client-guide.md "Signals").
// Thread safety: safe from any thread (the mask is per thread).
#pragma once

#include <string_view>

namespace jitcache::client::loader {

// Writes all of `bytes`; false with errno set when a write failed (EPIPE instead of SIGPIPE).
bool write_all_without_sigpipe(int fd, std::string_view bytes);

}  // namespace jitcache::client::loader
