// write(2) of a whole buffer that never raises a signal in the program: SIGPIPE is blocked in the
// calling thread while it writes, and one the write raised (a pipe or FIFO whose reader is gone)
// is taken back with sigtimedwait before the mask is restored, unless the program already had one
// pending. A socket is written with send(MSG_NOSIGNAL) instead. libjitcache installs no signal
// handler and changes no process-wide signal state (docs/client-guide.md "Signals").
// Thread safety: safe from any thread (the mask is per thread).
#pragma once

#include <string_view>

namespace jitcache::client::loader {

// Writes all of `bytes`; false with errno set when a write failed (EPIPE instead of SIGPIPE). With
// `wait_ms` >= 0 the descriptor is expected non-blocking: a full pipe is waited for with poll(2) for
// at most `wait_ms` in all, then the write gives up with ETIMEDOUT (a reader that never reads must
// not hold the program).
bool write_all_without_sigpipe(int fd, std::string_view bytes, int wait_ms = -1);

}  // namespace jitcache::client::loader
