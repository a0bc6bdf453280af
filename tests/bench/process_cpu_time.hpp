// CPU time spent by a server process and by this one, so that a benchmark can say what each
// request cost in CPU on either side of the socket, not only how long it took. The server is found
// from a connected Unix socket (SO_PEERCRED), which works for a daemon this program started and for
// one it was pointed at. Thread safety: free functions.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>

namespace jitcache::bench {

// The peer process of a connected Unix socket.
std::optional<pid_t> socket_peer_pid(int fd);

// User + system time of every thread of `pid`, from /proc/<pid>/stat (clock-tick resolution).
std::optional<std::chrono::microseconds> process_cpu_time(pid_t pid);

// User + system time of every thread of this process.
std::chrono::microseconds own_cpu_time();

}  // namespace jitcache::bench
