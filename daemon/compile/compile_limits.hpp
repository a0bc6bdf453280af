// Per-compile limits on a worker process: CPU time, wall time and memory, each configurable
// (docs/configuration.md), so that a PTX that makes the compiler spin or grow costs one worker, not the host.
// Thread safety: plain value.
#pragma once

#include <chrono>
#include <cstdint>

namespace jitcache::daemon::compile {

// Rationale for the defaults: cub_kernels.ptx (3.2 MB, 65 kernels), the largest corpus module,
// compiles in ~5 s on a 2-core machine with a peak of a few hundred MB of address space; the limits
// leave a generous margin for that and still bound a compiler that has lost its way.
struct CompileLimits {
  std::chrono::seconds cpu_time{120};                          // RLIMIT_CPU: SIGXCPU at this, SIGKILL 1 s later
  std::uint64_t address_space_bytes = std::uint64_t{4} << 30;  // RLIMIT_AS; 0 = unlimited
  std::chrono::milliseconds wall_time{120'000};                // SIGKILL when the worker is still running
};

}  // namespace jitcache::daemon::compile
