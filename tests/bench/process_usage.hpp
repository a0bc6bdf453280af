// CPU time and blocking waits of a server process and of this one, so that a benchmark can say what
// each request cost on either side of the socket, not only how long it took. A voluntary context
// switch is a thread going to sleep (on epoll, a futex, a socket): hand-offs between threads inside
// a server show up as more of them per request. The server is found from a connected Unix socket
// (SO_PEERCRED), which works for a daemon this program started and for one it was pointed at.
// Thread safety: free functions.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>

namespace jitcache::bench {

struct ProcessUsage {
  std::chrono::microseconds cpu_time{};  // user + system, all threads
  std::uint64_t voluntary_switches = 0;  // all threads
};

// The peer process of a connected Unix socket.
std::optional<pid_t> socket_peer_pid(int fd);

// From /proc/<pid>/stat (clock-tick resolution) and /proc/<pid>/task/*/status; nullopt when the
// process is gone or /proc cannot be read.
std::optional<ProcessUsage> process_usage(pid_t pid);

// This process (getrusage).
ProcessUsage own_usage();

}  // namespace jitcache::bench
